import { z } from 'zod'
import { parseCredentialEndpointRequest, zCredentialResponseEncryption } from './z-credential-request'

const REQUIRED = 'transaction_id is required'

/** A deferred credential request (OpenID4VCI 1.0 §9.1): the transaction, and its own response key. */
export const zDeferredCredentialRequest = z
  .object({
    credential_response_encryption: zCredentialResponseEncryption.optional(),
    transaction_id: z.string({ error: REQUIRED }).min(1, { error: REQUIRED }),
  })
  .loose()
export type DeferredCredentialRequest = z.infer<typeof zDeferredCredentialRequest>

/** The deferred credential request of `body`, or the refusal of §9.3 (the codes of §8.3.1.2). */
export const parseDeferredCredentialRequest = (body: Record<string, unknown>): DeferredCredentialRequest =>
  parseCredentialEndpointRequest(zDeferredCredentialRequest, body)
