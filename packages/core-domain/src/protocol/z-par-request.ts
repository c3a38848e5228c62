import { z } from 'zod'
import { ProtocolError, type ProtocolErrorCode } from '../errors'
import { MAX_JSON_DEPTH } from '../rules/json-depth'
import { leadingIssue } from './parse-issue'
import { zJsonText } from './z-json-text'

/** An optional parameter; an empty one reads as absent. */
const zParam = z
  .string()
  .optional()
  .transform((value) => (value === '' ? undefined : value))
/** A parameter the request needs: absent or empty is invalid_request with `description`. */
const zRequired = (description: string) => z.string({ error: description }).min(1, { error: description })

/** Schemes a browser must never be sent to with a code (script, local data). */
const UNSAFE_SCHEMES = new Set(['http:', 'javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:'])
const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost'])

/**
 * Why a wallet's redirect_uri is refused, or undefined. Wallets are public clients without
 * registration (HAIP 4): the redirect_uri is taken as pushed, must be https or a private-use
 * scheme (RFC 8252 §7.1; http only to a loopback address, §7.3), with no fragment (RFC 6749
 * §3.1.2) and no credentials, and the code is bound to the exact string.
 */
export function walletRedirectUriProblem(uri: string): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(uri)
  } catch {
    return 'redirect_uri must be an absolute URI'
  }
  const loopbackHttp = parsed.protocol === 'http:' && LOOPBACK.has(parsed.hostname)
  if (UNSAFE_SCHEMES.has(parsed.protocol) && !loopbackHttp)
    return 'redirect_uri must use https, a private-use scheme, or http to a loopback address'
  if (uri.includes('#')) return 'redirect_uri must not carry a fragment'
  if (parsed.username || parsed.password) return 'redirect_uri must not carry credentials'
  return undefined
}

const DETAILS_ARRAY = 'authorization_details must be a non-empty JSON array'

/**
 * One `authorization_details` entry (RFC 9396 §2, OpenID4VCI 1.0 §5.1.1): of type
 * openid_credential, naming a credential configuration. Whether it is one of the issuer's is the
 * issuer's check.
 */
export const zAuthorizationDetail = z
  .object({
    type: z.literal('openid_credential', {
      error: 'authorization_details entries must have type openid_credential',
    }),
    credential_configuration_id: z.string({
      error: 'authorization_details names an unknown credential_configuration_id',
    }),
  })
  .loose()
export type AuthorizationDetail = z.infer<typeof zAuthorizationDetail>

/** `authorization_details` as a form parameter: a JSON array of at least one entry. */
const zAuthorizationDetails = zJsonText(
  {
    tooDeep: `authorization_details nests deeper than ${MAX_JSON_DEPTH} levels`,
    notJson: 'authorization_details must be a JSON array',
  },
  z
    .array(
      // A non-object entry has no type either.
      z.preprocess(
        (entry) => (typeof entry === 'object' && entry !== null ? entry : {}),
        zAuthorizationDetail,
      ),
      { error: DETAILS_ARRAY },
    )
    .min(1, { error: DETAILS_ARRAY }),
)

/** RFC 9126 §2.1: each parameter once (a repeated form parameter parses as an array). */
export const zFormParameters = z.record(z.string(), z.unknown()).superRefine((body, context) => {
  for (const [key, value] of Object.entries(body))
    if (Array.isArray(value))
      context.addIssue({ code: 'custom', message: `${key} must not be repeated`, path: [key] })
})

/** Marks an issue with the protocol error code it stands for, when that is not invalid_request. */
const withCode = (error: ProtocolErrorCode) => ({ params: { error } })

/** The parameters of a pushed request, in the order the endpoint has always checked them. */
export const PAR_PARAMETERS = {
  request_uri: z.never({ error: 'request_uri must not be pushed (RFC 9126 §2.1)' }).optional(),
  request: z.never({ error: 'request objects are not supported; push the parameters' }).optional(),
  response_type: zRequired('response_type is required').refine((type) => type === 'code', {
    error: 'only response_type=code is supported',
    ...withCode('unsupported_response_type'),
  }),
  client_id: zRequired('client_id is required'),
  redirect_uri: zRequired('redirect_uri is required').superRefine((uri, context) => {
    const problem = walletRedirectUriProblem(uri)
    if (problem) context.addIssue({ code: 'custom', message: problem })
  }),
  code_challenge: zRequired('code_challenge is required (PKCE, RFC 7636)'),
  code_challenge_method: z.literal('S256', { error: 'code_challenge_method must be S256' }),
  scope: zParam,
  state: zParam,
  issuer_state: zParam,
  dpop_jkt: zParam,
  authorization_details: zAuthorizationDetails.optional(),
}

/** An S256 challenge is the base64url SHA-256 of the verifier: 43 characters. */
export const isS256Challenge = (request: { code_challenge: string }) =>
  /^[A-Za-z0-9_-]{43}$/.test(request.code_challenge)
export const S256_PROBLEM = { error: 'code_challenge is not an S256 challenge', path: ['code_challenge'] }

/**
 * A pushed authorization request (RFC 9126 §2.1, OpenID4VCI 1.0 §5.1; checklist I-31, I-34 to
 * I-37): no `request_uri` or `request` inside, `response_type=code` only, PKCE with S256, a
 * redirect_uri, and the credentials by `scope` and/or `authorization_details`. The parameters are
 * in the order the endpoint has always checked them.
 */
export const zParRequest = zFormParameters.pipe(
  z.object(PAR_PARAMETERS).loose().refine(isS256Challenge, S256_PROBLEM),
)

/** The first issue of a failed parse as the OAuth error it stands for (invalid_request by default). */
export function requestProblem(error: z.ZodError, fallback: string): ProtocolError {
  const issue = leadingIssue(error)
  const code = issue?.code === 'custom' ? (issue.params?.error as ProtocolErrorCode | undefined) : undefined
  return new ProtocolError(code ?? 'invalid_request', issue?.message ?? fallback)
}
export type ParRequest = z.infer<typeof zParRequest>

/** The request, or the RFC 6749 §4.1.2.1 error (as JSON, RFC 9126 §2.3) naming the first problem. */
export function parseParRequest(body: Record<string, unknown>): ParRequest {
  const parsed = zParRequest.safeParse(body)
  if (parsed.success) return parsed.data
  throw requestProblem(parsed.error, 'malformed pushed authorization request')
}
