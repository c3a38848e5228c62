import { z } from 'zod'

const zStrings = z.array(z.string())

/**
 * OAuth 2.0 authorization server metadata (RFC 8414 §2), with the members this issuer's
 * authorization server publishes from later specifications: PAR (RFC 9126 §5), DPoP (RFC 9449
 * §5.1), `iss` in responses (RFC 9207 §3), authorization_details (RFC 9396 §10), the
 * pre-authorized code grant (OpenID4VCI 1.0 §12.3) and attestation-based client authentication
 * (ABCA §8, §10.1). Members beyond these may appear.
 */
export const zAuthorizationServerMetadata = z
  .object({
    issuer: z.url(),
    authorization_endpoint: z.url().optional(),
    token_endpoint: z.url().optional(),
    jwks_uri: z.url().optional(),
    pushed_authorization_request_endpoint: z.url().optional(),
    require_pushed_authorization_requests: z.boolean().optional(),
    /** OpenID4VCI 1.1 Interactive Authorization (FiPA -03 §4.1). */
    authorization_challenge_endpoint: z.url().optional(),
    /** The earlier form's Interactive Authorization Endpoint, and whether only it is accepted. */
    interactive_authorization_endpoint: z.url().optional(),
    require_interactive_authorization_request: z.boolean().optional(),
    challenge_endpoint: z.url().optional(),
    grant_types_supported: zStrings.optional(),
    'pre-authorized_grant_anonymous_access_supported': z.boolean().optional(),
    token_endpoint_auth_methods_supported: zStrings.optional(),
    client_attestation_signing_alg_values_supported: zStrings.optional(),
    client_attestation_pop_signing_alg_values_supported: zStrings.optional(),
    dpop_signing_alg_values_supported: zStrings.optional(),
    response_types_supported: zStrings,
    response_modes_supported: zStrings.optional(),
    code_challenge_methods_supported: zStrings.optional(),
    authorization_response_iss_parameter_supported: z.boolean().optional(),
    authorization_details_types_supported: zStrings.optional(),
  })
  .loose()
export type AuthorizationServerMetadata = z.infer<typeof zAuthorizationServerMetadata>
