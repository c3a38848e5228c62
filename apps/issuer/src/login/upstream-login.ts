import { randomBytes } from 'node:crypto'
import { UpstreamError } from '@credential-service/core-domain'
import { codeHash, type JwkCipher } from '@credential-service/crypto'
import type { LoginProviderRow } from '@credential-service/db-schema'
import { type OutboundPolicy, outboundFetch } from '@credential-service/server-kit'
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose'

const TIMEOUT_MS = 5000
/** The ID token comes from the token request we just made: an older one is not this login's. */
const ID_TOKEN_MAX_AGE_SECONDS = 300
/** Clock difference tolerated with the provider (exp, iat). */
const CLOCK_TOLERANCE_SECONDS = 30
/** Asymmetric ID token algorithms only: a symmetric one would be keyed by our client secret. */
const ID_TOKEN_ALGS = ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA', 'Ed25519']

export interface LoginDeps {
  cipher: JwkCipher
  outbound: OutboundPolicy
  now: () => Date
}

/** A login provider of kind `openid`: an upstream OpenID provider (the row's CHECK holds these set). */
export type OpenIdLoginProvider = LoginProviderRow & { kind: 'openid'; issuer: string; clientId: string }

export const isOpenIdProvider = (row: LoginProviderRow): row is OpenIdLoginProvider =>
  row.kind === 'openid' && row.issuer !== null && row.clientId !== null

/** What the upstream provider said about the user. */
export interface AuthenticatedUser {
  issuer: string
  sub: string
  /** ID token claims, completed by userinfo claims (the ID token's win). */
  claims: Record<string, unknown>
}

/**
 * Claims about the token, not the user (RFC 7519 §4.1, OIDC Core §2, §3.1.3.6, §3.3.2.11, Front-
 * Channel Logout §3): left out of what an attribute provider is sent. `sub` goes on its own.
 */
const TOKEN_CLAIMS = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'nbf',
  'jti',
  'nonce',
  'auth_time',
  'acr',
  'amr',
  'azp',
  'at_hash',
  'c_hash',
  'sid',
])

/** The user's own claims of a login, without the ID token's protocol claims (data minimisation). */
export function userClaims(claims: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(claims).filter(([name]) => !TOKEN_CLAIMS.has(name)))
}

/** What the callback needs to finish the login; stored encrypted with the authorization request. */
export interface LoginSecrets {
  nonce: string
  codeVerifier: string
}

interface ProviderMetadata {
  issuer: string
  authorization_endpoint: string
  token_endpoint: string
  jwks_uri: string
  userinfo_endpoint?: string
  authorization_response_iss_parameter_supported?: boolean
}

async function getJson(
  url: string,
  name: string,
  deps: LoginDeps,
  init: { method?: 'POST'; headers?: Record<string, string>; body?: string } = {},
) {
  const response = await outboundFetch(
    url,
    { name, purpose: 'login-provider', timeoutMs: TIMEOUT_MS, ...init },
    deps.outbound,
  )
  if (response.status < 200 || response.status >= 300)
    throw new UpstreamError(`${name} answered HTTP ${response.status}`)
  try {
    return JSON.parse(response.body.toString('utf8')) as Record<string, unknown>
  } catch (cause) {
    throw new UpstreamError(`${name} did not answer JSON`, { cause })
  }
}

/** OpenID Connect Discovery 1.0 §4: the document's issuer must be the configured one exactly. */
async function discover(provider: OpenIdLoginProvider, deps: LoginDeps): Promise<ProviderMetadata> {
  const name = `login provider '${provider.id}'`
  const url = `${provider.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`
  const metadata = await getJson(url, name, deps)
  const fields = ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const
  if (metadata.issuer !== provider.issuer || fields.some((f) => typeof metadata[f] !== 'string'))
    throw new UpstreamError(`${name} published metadata for another issuer or without endpoints`)
  return metadata as unknown as ProviderMetadata
}

/** The authorization request to the upstream provider: code flow with PKCE (S256), nonce and state. */
export async function startLogin(
  provider: OpenIdLoginProvider,
  options: { redirectUri: string; state: string },
  deps: LoginDeps,
): Promise<{ url: string; secrets: LoginSecrets }> {
  const metadata = await discover(provider, deps)
  const secrets = {
    nonce: randomBytes(24).toString('base64url'),
    codeVerifier: randomBytes(32).toString('base64url'),
  }
  const url = new URL(metadata.authorization_endpoint)
  const scopes = new Set(['openid', ...provider.scopes])
  const params = {
    response_type: 'code',
    client_id: provider.clientId,
    redirect_uri: options.redirectUri,
    scope: [...scopes].join(' '),
    state: options.state,
    nonce: secrets.nonce,
    // OIDC Core §3.1.2.1: the holder logs in every time; a provider session never answers silently.
    prompt: 'login',
    // RFC 7636 §4.2: S256 challenge = base64url(SHA-256(verifier)).
    code_challenge: codeHash(secrets.codeVerifier),
    code_challenge_method: 'S256',
  }
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value)
  return { url: url.toString(), secrets }
}

/**
 * RFC 9207 §2.4: an `iss` in the authorization response must be the provider's, and a provider
 * that says it sends one must have sent it (mix-up defence), before its code is sent anywhere.
 */
function checkResponseIssuer(metadata: ProviderMetadata, iss: string | undefined, name: string) {
  if (iss === undefined && metadata.authorization_response_iss_parameter_supported !== true) return
  if (iss !== metadata.issuer)
    throw new UpstreamError(`${name}: the authorization response is from another issuer`)
}

/**
 * Exchanges the upstream code (RFC 6749 §4.1.3, client_secret_basic or public client) and verifies
 * the ID token (OIDC Core §3.1.3.7: signature by the provider's JWKS with an asymmetric algorithm,
 * iss, aud and azp, exp, iat not older than ID_TOKEN_MAX_AGE_SECONDS, sub, nonce). `iss` is the
 * authorization response's `iss` parameter.
 */
export async function finishLogin(
  provider: OpenIdLoginProvider,
  options: { code: string; iss?: string | undefined; redirectUri: string; secrets: LoginSecrets },
  deps: LoginDeps,
): Promise<AuthenticatedUser> {
  const name = `login provider '${provider.id}'`
  const metadata = await discover(provider, deps)
  checkResponseIssuer(metadata, options.iss, name)
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code: options.code,
    redirect_uri: options.redirectUri,
    code_verifier: options.secrets.codeVerifier,
  })
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  }
  if (provider.clientSecretEncrypted) {
    const secret = deps.cipher.decrypt<string>(
      provider.clientSecretEncrypted,
      `login-provider:${provider.tenantId}/${provider.id}`,
    )
    // RFC 6749 §2.3.1: both parts form-urlencoded before base64.
    const basic = `${encodeURIComponent(provider.clientId)}:${encodeURIComponent(secret)}`
    headers.authorization = `Basic ${Buffer.from(basic).toString('base64')}`
  } else form.set('client_id', provider.clientId)
  const tokens = await getJson(metadata.token_endpoint, name, deps, {
    method: 'POST',
    headers,
    body: form.toString(),
  })
  if (typeof tokens.id_token !== 'string') throw new UpstreamError(`${name} returned no ID token`)
  const jwks = (await getJson(metadata.jwks_uri, name, deps)) as unknown as JSONWebKeySet
  let claims: Record<string, unknown>
  try {
    const verified = await jwtVerify(tokens.id_token, createLocalJWKSet(jwks), {
      issuer: provider.issuer,
      audience: provider.clientId,
      algorithms: ID_TOKEN_ALGS,
      requiredClaims: ['exp', 'iat', 'sub', 'nonce'],
      maxTokenAge: ID_TOKEN_MAX_AGE_SECONDS,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: deps.now(),
    })
    claims = verified.payload
  } catch (cause) {
    throw new UpstreamError(`${name} returned an invalid ID token`, { cause })
  }
  // OIDC Core §3.1.3.7 (4, 5): with several audiences, azp names the client it was issued to.
  const several = Array.isArray(claims.aud) && claims.aud.length > 1
  if ((several || claims.azp !== undefined) && claims.azp !== provider.clientId)
    throw new UpstreamError(`${name} returned an ID token issued to another client (azp)`)
  if (claims.nonce !== options.secrets.nonce || typeof claims.sub !== 'string')
    throw new UpstreamError(`${name} returned an ID token for another login`)
  if (metadata.userinfo_endpoint && typeof tokens.access_token === 'string') {
    const info = await getJson(metadata.userinfo_endpoint, name, deps, {
      headers: { authorization: `Bearer ${tokens.access_token}`, accept: 'application/json' },
    })
    // OIDC Core §5.3.2: userinfo of another subject must not be used.
    if (info.sub === claims.sub) claims = { ...info, ...claims }
  }
  return { issuer: provider.issuer, sub: claims.sub as string, claims }
}
