import { errorFromResponse, ManagementApiError, parseJson } from './errors.js'
import type { TokenResponse } from './generated/types.js'

export interface ClientCredentialsTokenOptions {
  /** Token endpoint: `{baseUrl}/api/oauth2/token` for the built-in token server. */
  tokenUrl: string
  clientId: string
  clientSecret: string
  /** Defaults to the global `fetch` (Node 20 and later, browsers). */
  fetch?: typeof fetch
  signal?: AbortSignal
}

export interface TokenSourceOptions extends Omit<ClientCredentialsTokenOptions, 'signal' | 'fetch'> {
  fetch: typeof fetch
  now: () => number
}

export interface TokenSource {
  /** A token valid for a while yet: the cached one, else a new one (one request for concurrent callers). */
  get(signal?: AbortSignal): Promise<string>
  /** Forgets `token` if it is the cached one (the API refused it). */
  invalidate(token: string): void
}

/**
 * One client credentials grant (RFC 6749 §4.4) with `client_secret_basic`, which the built-in
 * token server and identity providers in OIDC mode both accept. The whole token response comes
 * back: `scope` lists the granted roles (the admin console shows what they allow). Rejects with a
 * `ManagementApiError` (the OAuth `error` as its `code`, e.g. `invalid_client`).
 */
export async function requestClientCredentialsToken(
  options: ClientCredentialsTokenOptions,
): Promise<TokenResponse> {
  // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined for Basic.
  const basic = btoa(`${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`)
  return postTokenRequest(options, { grant_type: 'client_credentials' }, { authorization: `Basic ${basic}` })
}

export interface AuthorizationCodeTokenOptions {
  /** The identity provider's token endpoint. */
  tokenUrl: string
  /** A public client: identified by its id, authenticated by the PKCE verifier (RFC 7636). */
  clientId: string
  code: string
  /** The `redirect_uri` of the authorization request, exactly (RFC 6749 §4.1.3). */
  redirectUri: string
  codeVerifier: string
  fetch?: typeof fetch
  signal?: AbortSignal
}

/**
 * The authorization code grant of a public client with PKCE (RFC 6749 §4.1.3, RFC 7636 §4.5),
 * as the admin console signs in at an identity provider in OIDC mode. Rejects with a
 * `ManagementApiError` carrying the OAuth `error` (e.g. `invalid_grant`).
 */
export async function requestAuthorizationCodeToken(
  options: AuthorizationCodeTokenOptions,
): Promise<TokenResponse> {
  return postTokenRequest(options, {
    grant_type: 'authorization_code',
    code: options.code,
    redirect_uri: options.redirectUri,
    client_id: options.clientId,
    code_verifier: options.codeVerifier,
  })
}

/** One token request (a form POST, RFC 6749 §3.2) and its JSON token response. */
async function postTokenRequest(
  options: { tokenUrl: string; fetch?: typeof fetch; signal?: AbortSignal },
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<TokenResponse> {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init))
  const { signal } = options
  const init = { method: 'POST', url: options.tokenUrl }
  let response: Response
  try {
    response = await doFetch(options.tokenUrl, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: new URLSearchParams(params).toString(),
      // In a browser, a refusal's `WWW-Authenticate: Basic` (RFC 6749 §5.2) would open the browser's
      // own login dialog, and the request would wait on it: without credentials mode it answers.
      credentials: 'omit',
      ...(signal ? { signal } : {}),
    })
  } catch (error) {
    if (signal?.aborted) throw error
    throw new ManagementApiError('network_error', { ...init, status: 0, cause: error })
  }
  return tokenResponseOf(init, response)
}

async function tokenResponseOf(init: { method: string; url: string }, response: Response) {
  if (!response.ok) throw await errorFromResponse(init.method, init.url, response)
  const text = await response.text()
  const body = parseJson(text) as Partial<TokenResponse> | undefined
  if (typeof body?.access_token !== 'string' || typeof body.expires_in !== 'number')
    throw new ManagementApiError('invalid_response', { ...init, status: response.status, body: text })
  return body as TokenResponse
}

/**
 * Tokens by the client credentials grant (`requestClientCredentialsToken`). A token is reused
 * until shortly before `expires_in` runs out, counted from when it was requested.
 */
export function createTokenSource(options: TokenSourceOptions): TokenSource {
  let cached: { value: string; renewAt: number } | undefined
  let pending: Promise<string> | undefined

  async function request(signal: AbortSignal | undefined): Promise<string> {
    const requestedAt = options.now()
    const body = await requestClientCredentialsToken({ ...options, ...(signal ? { signal } : {}) })
    const lifetimeMs = body.expires_in * 1000
    // Renew a little early (a tenth of the lifetime, 30 s at most) so a token never expires in flight.
    cached = {
      value: body.access_token,
      renewAt: requestedAt + lifetimeMs - Math.min(30_000, lifetimeMs / 10),
    }
    return body.access_token
  }

  return {
    get(signal) {
      if (cached && options.now() < cached.renewAt) return Promise.resolve(cached.value)
      pending ??= request(signal).finally(() => {
        pending = undefined
      })
      return pending
    },
    invalidate(token) {
      if (cached?.value === token) cached = undefined
    },
  }
}
