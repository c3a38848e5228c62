import { z } from 'zod'
import { ProtocolError } from '../errors'

/** RFC 9126 §2.2: the URN prefix of the request_uri a pushed request is answered with. */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:'

const MUST_BE_PUSHED = 'authorization requests must be pushed (PAR): send client_id and request_uri'

/**
 * The authorization request at /authorize (RFC 9126 §4, RFC 6749 §4.1.1): the wallet's
 * `client_id` and the `request_uri` of its pushed request. HAIP takes no plain requests (I-33):
 * every other parameter came with the push, and is ignored here.
 */
export const zAuthorizationRequest = z
  .object({
    client_id: z.string({ error: MUST_BE_PUSHED }).min(1, { error: MUST_BE_PUSHED }),
    request_uri: z
      .string({ error: MUST_BE_PUSHED })
      .startsWith(REQUEST_URI_PREFIX, { error: MUST_BE_PUSHED }),
  })
  .loose()
export type AuthorizationRequest = z.infer<typeof zAuthorizationRequest>

/**
 * The request, or invalid_request. Rendered as JSON, never as a redirect: before the pushed
 * request is found, its redirect_uri is not known to be the wallet's.
 */
export function parseAuthorizationRequest(query: Record<string, unknown>): AuthorizationRequest {
  const parsed = zAuthorizationRequest.safeParse(query)
  if (parsed.success) return parsed.data
  throw new ProtocolError('invalid_request', MUST_BE_PUSHED)
}
