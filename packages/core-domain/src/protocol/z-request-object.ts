import { z } from 'zod'
import { zDcqlQuery } from '../contract/dcql'

/** A JWK Set (RFC 7517 §5); the keys' members are the JOSE library's to check. */
const zJwkSet = z.object({ keys: z.array(z.looseObject({})) })

/**
 * `client_metadata` of a request object (OpenID4VP 1.0 §5.1, §11.1): the key to encrypt a
 * `direct_post.jwt` response to, the formats and algorithms the verifier takes, and the response
 * `enc` values.
 */
export const zVerifierClientMetadata = z
  .object({
    jwks: zJwkSet.optional(),
    vp_formats_supported: z.record(z.string(), z.record(z.string(), z.unknown())),
    encrypted_response_enc_values_supported: z.array(z.string()).optional(),
  })
  .loose()
export type VerifierClientMetadata = z.infer<typeof zVerifierClientMetadata>

/** `verifier_info` entries (OpenID4VP 1.0 §5.1): attestations about the verifier, such as a registration certificate. */
export const zVerifierInfo = z
  .object({
    format: z.string(),
    data: z.union([z.string(), z.record(z.string(), z.unknown())]),
    credential_ids: z.array(z.string()).optional(),
  })
  .loose()

/**
 * The claims of the request object the verifier signs (OpenID4VP 1.0 §5, JAR RFC 9101; HAIP):
 * static discovery's `aud`, the response by `direct_post` or `direct_post.jwt` to `response_uri`,
 * the nonce and state, the DCQL query (§6), and, when the wallet posted one, its `wallet_nonce`
 * (§5.10).
 */
export const zRequestObject = z
  .object({
    aud: z.string(),
    iat: z.number().int(),
    exp: z.number().int(),
    client_id: z.string(),
    response_type: z.literal('vp_token'),
    response_mode: z.enum(['direct_post', 'direct_post.jwt']),
    response_uri: z.url(),
    nonce: z.string(),
    state: z.string().optional(),
    dcql_query: zDcqlQuery,
    client_metadata: zVerifierClientMetadata.optional(),
    transaction_data: z.array(z.string()).min(1).optional(),
    verifier_info: z.array(zVerifierInfo).min(1).optional(),
    wallet_nonce: z.string().optional(),
  })
  .loose()
export type RequestObject = z.infer<typeof zRequestObject>
