import { z } from 'zod'
import { zRole } from '../roles'

/** `POST /api/oauth2/token` body (RFC 6749 §4.4); credentials may come by Basic auth instead. */
export const zTokenRequest = z
  .object({
    grant_type: z.string().min(1),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
    scope: z.string().optional(),
  })
  .loose()
  .meta({ id: 'TokenRequest' })
export type TokenRequest = z.infer<typeof zTokenRequest>

/** RFC 6749 §5.1 successful response. */
export const zTokenResponse = z
  .object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int(),
    scope: z.string().describe('Granted roles, space-separated'),
  })
  .meta({ id: 'TokenResponse' })
export type TokenResponse = z.infer<typeof zTokenResponse>

/** The public keys that verify management access tokens (RFC 7517 JWK Set). */
export const zJwks = z
  .object({ keys: z.array(z.record(z.string(), z.unknown())) })
  .describe('JWK Set (RFC 7517) of public keys')
  .meta({ id: 'Jwks' })

/** RFC 8414 metadata of the management API's token endpoint; members beyond the registered ones may appear. */
export const zManagementAuthorizationServerMetadata = z
  .object({
    issuer: z.string(),
    token_endpoint: z.string(),
    jwks_uri: z.string(),
    grant_types_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    response_types_supported: z.array(z.string()),
  })
  .loose()
  .meta({ id: 'AuthorizationServerMetadata' })

/** Claims of a management access token. */
export const zAccessTokenClaims = z
  .object({
    iss: z.string(),
    aud: z.string(),
    sub: z.string().optional().describe('Tenant id; absent for operator clients'),
    tenant_generation: z
      .string()
      .optional()
      .describe('Generation of the tenant `sub` at issuance; present exactly when `sub` is'),
    client_id: z.string(),
    roles: z.array(zRole),
    iat: z.number(),
    exp: z.number(),
    jti: z.string(),
  })
  // A tenant token without its generation could not be told from one of an earlier tenant that
  // had the same id (checklist S-108).
  .refine((claims) => (claims.sub === undefined) === (claims.tenant_generation === undefined), {
    message: 'tenant_generation must accompany sub',
  })
export type AccessTokenClaims = z.infer<typeof zAccessTokenClaims>
