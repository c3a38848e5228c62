import { z } from 'zod'
import { ProtocolError } from '../errors'
import { MAX_JSON_DEPTH } from '../rules/json-depth'
import { zJsonText } from './z-json-text'

// The messages below say what is wrong with the value at their path; the refusal prefixes the
// path (`vp_token.pid holds a presentation that is not a string`).

/**
 * `vp_token` (OpenID4VP 1.0 §8.1) answering a DCQL query: a JSON object keyed by credential query
 * id, each a non-empty array of presentations, each a string (an SD-JWT, a base64url
 * DeviceResponse). In a form it is JSON text, its depth bounded before parsing (checklist S-123).
 * Whether the query asked for those ids, and how many, is the verifier's check.
 */
export const zVpToken = zJsonText(
  { tooDeep: `nests deeper than ${MAX_JSON_DEPTH} levels`, notJson: 'is not JSON' },
  z.record(
    z.string(),
    z
      .array(z.string({ error: 'holds a presentation that is not a string' }), {
        error: 'must be a non-empty array',
      })
      .min(1, { error: 'must be a non-empty array' }),
    { error: 'must be a JSON object keyed by credential query id' },
  ),
)
export type VpToken = z.infer<typeof zVpToken>

/** A value that is not one string (a repeated form parameter) reads as absent. */
const zOptionalText = z.string().optional().catch(undefined)

/** The wallet's answer with presentations (OpenID4VP 1.0 §8.1): vp_token and the request's state. */
export const zVpTokenResponse = z
  .object({
    vp_token: zVpToken,
    state: zOptionalText,
    /** Not a string, so no error response (below): ignored. Optional on the way in, absent after. */
    error: z
      .unknown()
      .optional()
      .transform(() => undefined),
  })
  .loose()
export type VpTokenResponse = z.infer<typeof zVpTokenResponse>

/** The wallet's error response (OpenID4VP 1.0 §8.5, RFC 6749 §4.1.2.1). */
export const zAuthorizationErrorResponse = z
  .object({ error: z.string(), error_description: zOptionalText, state: zOptionalText })
  .loose()
export type AuthorizationErrorResponse = z.infer<typeof zAuthorizationErrorResponse>

/** An authorization response as posted to the response endpoint (OpenID4VP 1.0 §8.2), or decrypted. */
export const zAuthorizationResponse = z.union([zAuthorizationErrorResponse, zVpTokenResponse])
export type AuthorizationResponse = z.infer<typeof zAuthorizationResponse>

/**
 * The `direct_post.jwt` response (OpenID4VP 1.0 §8.3): the parameters above, encrypted to the
 * request's key, as one JWE in `response`.
 */
export const zEncryptedAuthorizationResponse = z
  .object({
    response: z.string({ error: 'the response must be encrypted (direct_post.jwt) but came in plain text' }),
  })
  .loose()
export type EncryptedAuthorizationResponse = z.infer<typeof zEncryptedAuthorizationResponse>

/** A parsed response, or its refusal: the verifier fails the session with the reason before answering it. */
export type ParseResult<T> = { success: true; data: T } | { success: false; error: ProtocolError }

function refusal(issue: z.core.$ZodIssue | undefined): ProtocolError {
  const at = (issue?.path ?? []).filter((key) => typeof key === 'string')
  const message = issue?.message ?? 'malformed authorization response'
  return new ProtocolError('invalid_request', at.length ? `${at.join('.')} ${message}` : message)
}

/** §8.2, §8.5: an error response when `error` is a string, else the vp_token response; invalid_request otherwise. */
export function safeParseAuthorizationResponse(
  form: Record<string, unknown>,
): ParseResult<AuthorizationResponse> {
  const parsed = zAuthorizationResponse.safeParse(form)
  if (parsed.success) return parsed
  // The union's issue holds each option's; the vp_token response's are the ones to tell.
  const union = parsed.error.issues[0]
  const issues = union?.code === 'invalid_union' ? union.errors[1] : parsed.error.issues
  return { success: false, error: refusal(issues?.[0]) }
}

/** §8.3: the JWE of a direct_post.jwt response, or invalid_request. */
export function safeParseEncryptedAuthorizationResponse(
  form: Record<string, unknown>,
): ParseResult<EncryptedAuthorizationResponse> {
  const parsed = zEncryptedAuthorizationResponse.safeParse(form)
  if (parsed.success) return parsed
  return {
    success: false,
    error: new ProtocolError('invalid_request', parsed.error.issues[0]?.message ?? ''),
  }
}
