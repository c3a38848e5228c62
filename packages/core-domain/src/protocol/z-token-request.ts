import { z } from 'zod'
import { ProtocolError } from '../errors'

/**
 * An optional parameter. A value that is not one string (a repeated form parameter, a JSON value)
 * reads as absent, as the token endpoint always has; an empty one stays '' for the grant to judge.
 */
const zParam = z.string().optional().catch(undefined)

/**
 * A parameter the grant cannot start without: absent, empty or not one string is invalid_request
 * with `description` (RFC 6749 §5.2). Only parameters checked before anything else of the grant are
 * required here; the grants check the others, in the order the token endpoint has always answered.
 */
const zRequired = (description: string) => z.string({ error: description }).min(1, { error: description })

/** Parameters every grant may carry: a public client names itself (RFC 6749 §3.2.1). */
const zClientParams = { client_id: zParam }

/** The pre-authorized code grant (OpenID4VCI 1.0 §6.1). */
export const zPreAuthorizedCodeRequest = z
  .object({
    grant_type: z.literal('urn:ietf:params:oauth:grant-type:pre-authorized_code'),
    'pre-authorized_code': zRequired('pre-authorized_code is required'),
    tx_code: zParam,
    ...zClientParams,
  })
  .loose()
export type PreAuthorizedCodeRequest = z.infer<typeof zPreAuthorizedCodeRequest>

/** The authorization code grant (RFC 6749 §4.1.3, RFC 7636 §4.5). */
export const zAuthorizationCodeRequest = z
  .object({
    grant_type: z.literal('authorization_code'),
    code: zRequired('code is required'),
    redirect_uri: zParam,
    code_verifier: zParam,
    ...zClientParams,
  })
  .loose()
export type AuthorizationCodeRequest = z.infer<typeof zAuthorizationCodeRequest>

/** The refresh token grant (RFC 6749 §6). */
export const zRefreshTokenRequest = z
  .object({
    grant_type: z.literal('refresh_token'),
    refresh_token: zRequired('refresh_token is required'),
    ...zClientParams,
  })
  .loose()
export type RefreshTokenRequest = z.infer<typeof zRefreshTokenRequest>

/** A token request (OpenID4VCI 1.0 §6.1, RFC 6749 §4.1.3, §6), one shape per `grant_type`. */
export const zAccessTokenRequest = z.discriminatedUnion('grant_type', [
  zPreAuthorizedCodeRequest,
  zAuthorizationCodeRequest,
  zRefreshTokenRequest,
])
export type AccessTokenRequest = z.infer<typeof zAccessTokenRequest>
export type GrantType = AccessTokenRequest['grant_type']

/**
 * Parses a token request body (RFC 6749 §5.2): a `grant_type` that is absent or not one of ours is
 * unsupported_grant_type, a missing required parameter invalid_request.
 */
export function parseAccessTokenRequest(body: Record<string, unknown>): AccessTokenRequest {
  const parsed = zAccessTokenRequest.safeParse(body)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]
  if (!issue || issue.code === 'invalid_union')
    throw new ProtocolError('unsupported_grant_type', 'this grant type is not supported')
  throw new ProtocolError('invalid_request', issue.message)
}
