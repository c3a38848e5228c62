import { type Principal, ProtocolError, type Role, type TokenResponse } from '@credential-service/core-domain'
import type { SecretVerifier } from '@credential-service/crypto'
import type { ClientCredentials } from '@credential-service/db-schema'
import type { IssuedToken } from '@credential-service/server-kit'

export interface TokenServiceDeps {
  findClient: (clientId: string) => Promise<ClientCredentials | undefined>
  verifySecret: SecretVerifier
  issueToken: (principal: Principal) => Promise<IssuedToken>
}

/** Failed client authentications of the request's client id and IP (checklist S-109). */
export interface AuthFailures {
  /** Throws RateLimitedError when too many recent attempts failed. */
  check(): Promise<void>
  /** Counts this attempt as failed. */
  record(): Promise<void>
}

export interface TokenExchangeOptions {
  grantType: string | undefined
  /** Credentials from the body (`client_id`, `client_secret`). */
  bodyCredentials: { clientId?: string | undefined; clientSecret?: string | undefined }
  /** Credentials from `Authorization: Basic`, already decoded; undefined when absent. */
  basicCredentials: { clientId: string; clientSecret: string } | undefined
  /** RFC 6749 §3.3 scope: space-separated roles to narrow the token to. */
  scope: string | undefined
  /** Throttles repeated wrong secrets; undefined: no limit. */
  failures?: AuthFailures | undefined
}

const BASIC_CHALLENGE = 'Basic realm="credential-service"'

function invalidClient(description: string): ProtocolError {
  // RFC 6749 §5.2: 401 and a challenge naming the scheme the client may use.
  return new ProtocolError('invalid_client', description, { status: 401, challenge: BASIC_CHALLENGE })
}

/** The client credentials grant (RFC 6749 §4.4), the only grant of the management API (spec §5 rule 2). */
export function createTokenService(deps: TokenServiceDeps) {
  const authenticate = createClientAuthenticator(deps)
  return async function exchange(options: TokenExchangeOptions): Promise<TokenResponse> {
    if (!options.grantType) throw new ProtocolError('invalid_request', 'grant_type is required')
    if (options.grantType !== 'client_credentials') {
      throw new ProtocolError('unsupported_grant_type', 'only the client_credentials grant is supported')
    }
    const { bodyCredentials, basicCredentials } = options
    if (
      basicCredentials &&
      (bodyCredentials.clientId !== undefined || bodyCredentials.clientSecret !== undefined)
    ) {
      // RFC 6749 §2.3: a client must not use more than one authentication method per request.
      throw new ProtocolError(
        'invalid_request',
        'client credentials were sent both in the body and in Authorization',
      )
    }
    const clientId = basicCredentials?.clientId ?? bodyCredentials.clientId
    const clientSecret = basicCredentials?.clientSecret ?? bodyCredentials.clientSecret
    const found = await authenticate(clientId, clientSecret, options.failures)
    const roles = narrowRoles(found.client.roles, options.scope)
    const token = await deps.issueToken({
      clientId: found.client.clientId,
      tenantId: found.client.tenantId ?? undefined,
      tenantGeneration: found.tenantGeneration ?? undefined,
      roles,
    })
    return {
      access_token: token.accessToken,
      token_type: 'Bearer',
      expires_in: token.expiresIn,
      scope: roles.join(' '),
    }
  }
}

/**
 * A client's id and secret checked (the token endpoint's and the console sign-in's one check):
 * its record, or `invalid_client`.
 */
export function createClientAuthenticator(
  deps: Pick<TokenServiceDeps, 'findClient' | 'verifySecret'>,
  /** The refusal in the caller's terms (the token endpoint's is `invalid_client`, RFC 6749 §5.2). */
  refuse: (description: string) => Error = invalidClient,
) {
  return async (
    clientId: string | undefined,
    clientSecret: string | undefined,
    failures: AuthFailures | undefined,
  ): Promise<ClientCredentials> => {
    if (!clientId || !clientSecret) throw refuse('client authentication is required')
    // Checked before the bcrypt compare, so a locked-out guesser costs no CPU.
    await failures?.check()
    const found = await deps.findClient(clientId)
    // Unknown client and wrong secret answer alike, in content and in time (an unknown client is
    // compared against a dummy hash), so client ids cannot be probed.
    if (!(await deps.verifySecret(clientSecret, found?.secretHash)) || !found) {
      await failures?.record()
      throw refuse('client authentication failed')
    }
    return found
  }
}

function narrowRoles(granted: readonly Role[], scope: string | undefined): Role[] {
  if (scope === undefined || scope.trim() === '') return [...granted]
  const requested = scope.trim().split(/\s+/)
  const unknown = requested.filter((role) => !granted.includes(role as Role))
  if (unknown.length > 0) {
    throw new ProtocolError('invalid_scope', `the client does not hold: ${unknown.join(', ')}`)
  }
  return granted.filter((role) => requested.includes(role))
}

/**
 * The client id a token request presents (Basic, else body), for counting its failures; undefined
 * when it presents none or malformed Basic credentials.
 */
export function presentedClientId(
  authorization: string | undefined,
  body: { client_id?: unknown } | undefined,
): string | undefined {
  try {
    const clientId = parseBasicAuthorization(authorization)?.clientId ?? body?.client_id
    return typeof clientId === 'string' && clientId !== '' ? clientId : undefined
  } catch {
    return undefined
  }
}

/** RFC 6749 §2.3.1: id and secret are form-urlencoded before Base64. Undefined if not Basic. */
export function parseBasicAuthorization(
  header: string | undefined,
): { clientId: string; clientSecret: string } | undefined {
  const match = header ? /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header.trim()) : null
  if (!match?.[1]) {
    if (header && /^Basic\b/i.test(header)) throw invalidClient('the Basic credentials are malformed')
    return undefined
  }
  const decoded = Buffer.from(match[1], 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) throw invalidClient('the Basic credentials are malformed')
  const formDecode = (value: string) => {
    try {
      return decodeURIComponent(value.replaceAll('+', ' '))
    } catch {
      return value
    }
  }
  return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) }
}
