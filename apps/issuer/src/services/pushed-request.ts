import {
  type CredentialConfig,
  exceedsJsonDepth,
  MAX_JSON_DEPTH,
  ProtocolError,
} from '@credential-service/core-domain'

/** A pushed authorization request as this issuer accepts it (RFC 9126, OpenID4VCI 1.0 §5.1). */
export interface PushedRequest {
  clientId: string
  redirectUri: string
  codeChallenge: string
  state: string | undefined
  issuerState: string | undefined
  dpopJkt: string | undefined
  /** Configurations named by a known scope (unknown scopes are ignored, I-35). */
  scopeConfigurationIds: string[]
  /** Configurations named by `authorization_details` of type openid_credential. */
  detailConfigurationIds: string[]
}

const invalid = (description: string) => new ProtocolError('invalid_request', description)
/** Schemes a browser must never be sent to with a code (script, local data). */
const UNSAFE_SCHEMES = new Set(['http:', 'javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:'])
const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost'])

/**
 * Wallets are public clients without registration (HAIP 4): the redirect_uri is taken as pushed,
 * must be https or a private-use scheme (RFC 8252 §7.1; http only to a loopback address, §7.3),
 * with no fragment (RFC 6749 §3.1.2), and the code is bound to the exact string.
 */
export function checkRedirectUri(uri: string): void {
  let parsed: URL
  try {
    parsed = new URL(uri)
  } catch {
    throw invalid('redirect_uri must be an absolute URI')
  }
  const loopbackHttp = parsed.protocol === 'http:' && LOOPBACK.has(parsed.hostname)
  if (UNSAFE_SCHEMES.has(parsed.protocol) && !loopbackHttp)
    throw invalid('redirect_uri must use https, a private-use scheme, or http to a loopback address')
  if (uri.includes('#')) throw invalid('redirect_uri must not carry a fragment')
  if (parsed.username || parsed.password) throw invalid('redirect_uri must not carry credentials')
}

function detailIds(raw: unknown, configs: CredentialConfig[]): string[] {
  if (raw === undefined) return []
  // Checklist S-123: a form field is JSON the body guard never saw.
  if (typeof raw === 'string' && exceedsJsonDepth(raw))
    throw invalid(`authorization_details nests deeper than ${MAX_JSON_DEPTH} levels`)
  let details: unknown
  try {
    details = typeof raw === 'string' ? JSON.parse(raw) : raw
  } catch {
    throw invalid('authorization_details must be a JSON array')
  }
  if (!Array.isArray(details) || details.length === 0)
    throw invalid('authorization_details must be a non-empty JSON array')
  return details.map((detail: unknown) => {
    const entry = (typeof detail === 'object' && detail !== null ? detail : {}) as Record<string, unknown>
    if (entry.type !== 'openid_credential')
      throw invalid('authorization_details entries must have type openid_credential')
    const id = entry.credential_configuration_id
    if (typeof id !== 'string' || !configs.some((c) => c.id === id))
      throw invalid('authorization_details names an unknown credential_configuration_id')
    return id
  })
}

/**
 * Parses a PAR body (RFC 9126 §2.1): no `request_uri` inside (I-31), `response_type=code` only
 * (I-37), PKCE with S256 mandatory (I-34), a redirect_uri (I-36), credentials by scope and/or
 * authorization_details (I-35).
 */
export function parsePushedRequest(
  body: Record<string, unknown>,
  configs: CredentialConfig[],
): PushedRequest {
  for (const [key, value] of Object.entries(body))
    if (Array.isArray(value)) throw invalid(`${key} must not be repeated`)
  const text = (key: string) =>
    typeof body[key] === 'string' && body[key] !== '' ? (body[key] as string) : undefined
  if (body.request_uri !== undefined) throw invalid('request_uri must not be pushed (RFC 9126 §2.1)')
  if (body.request !== undefined) throw invalid('request objects are not supported; push the parameters')
  const responseType = text('response_type')
  if (!responseType) throw invalid('response_type is required')
  if (responseType !== 'code')
    throw new ProtocolError('unsupported_response_type', 'only response_type=code is supported')
  const clientId = text('client_id')
  if (!clientId) throw invalid('client_id is required')
  const redirectUri = text('redirect_uri')
  if (!redirectUri) throw invalid('redirect_uri is required')
  checkRedirectUri(redirectUri)
  const codeChallenge = text('code_challenge')
  if (!codeChallenge) throw invalid('code_challenge is required (PKCE, RFC 7636)')
  if (text('code_challenge_method') !== 'S256') throw invalid('code_challenge_method must be S256')
  if (!/^[A-Za-z0-9_-]{43}$/.test(codeChallenge)) throw invalid('code_challenge is not an S256 challenge')
  const scopes = new Set((text('scope') ?? '').split(' ').filter(Boolean))
  return {
    clientId,
    redirectUri,
    codeChallenge,
    state: text('state'),
    issuerState: text('issuer_state'),
    dpopJkt: text('dpop_jkt'),
    scopeConfigurationIds: configs.filter((c) => scopes.has(c.config.scope ?? c.id)).map((c) => c.id),
    detailConfigurationIds: [...new Set(detailIds(body.authorization_details, configs))],
  }
}

/**
 * The one login provider of the requested configurations (undefined when none logs its holder in).
 * One login fills every configuration's claims, so configurations of different providers are not
 * requested together.
 */
export function loginProviderOf(requested: CredentialConfig[]): string | undefined {
  const providers = new Set(requested.flatMap((c) => c.userAuthentication?.loginProviderId ?? []))
  if (providers.size > 1)
    throw new ProtocolError(
      'invalid_scope',
      'these credential configurations log the holder in at different login providers: request them separately',
    )
  return [...providers][0]
}

/**
 * What the requested configurations ask of a pushed request. Without an offer (no valid
 * issuer_state), each must log its holder in: nothing else vouches for the holder or fills the
 * claims, and the unregistered wallet's redirect_uri is used only after the holder logged in.
 * `walletAttestation: "required"` needs an attested client here as at the token endpoint (HAIP 4.3).
 */
export function checkRequested(
  requested: CredentialConfig[],
  request: { offered: boolean; attested: boolean },
): void {
  const withoutLogin = requested.filter((c) => !c.userAuthentication)
  if (!request.offered && withoutLogin.length > 0)
    throw new ProtocolError(
      'invalid_scope',
      `${withoutLogin.map((c) => `'${c.id}'`).join(', ')} can be requested only with the issuer_state of an offer`,
    )
  loginProviderOf(requested)
  const attested = requested.find((c) => c.walletAttestation === 'required')
  if (attested && !request.attested)
    throw new ProtocolError(
      'invalid_client',
      `'${attested.id}' requires wallet attestation client authentication`,
      { status: 401 },
    )
}
