import { claimPath, DomainError, ProtocolError } from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import type { AuthorizationRequestRow, LoginProviderRow } from '@credential-service/db-schema'
import { completeLogin } from './complete-login'
import { loginBrowserOf, loginCookie, newLoginBrowser } from './login-browser'
import { type Claims, type HolderLogin, isObject, type MappedConfig } from './login-claims'
import type { LoginKind } from './login-kind'
import { LOGIN_SECONDS, type LoginScope, newHandle } from './login-scope'
import {
  type AuthenticatedUser,
  finishLogin,
  isOpenIdProvider,
  type LoginSecrets,
  startLogin,
  userClaims,
} from './upstream-login'
import { type AuthorizationStep, denied, refused, toWallet } from './wallet-redirect'

/** The login kind `openid`: the browser logs in at an upstream OpenID provider (upstream-login.ts). */
export const openIdLogin: LoginKind<'openid'> = {
  kind: 'openid',
  start: startOpenIdLogin,
  // Only in the browser: the upstream provider's pages are the holder's to see.
  interactions: ['web'],
}

/** The upstream provider's redirect back to us (OIDC Core §3.1.2.1 redirect_uri). */
const callbackUrl = (scope: LoginScope) => `${scope.issuerUrl}/authorize/callback`
/** The sealed LoginSecrets are bound to their request (the AAD). */
const secretsAad = (scope: LoginScope, requestId: string) => `login:${scope.tenantId}/${requestId}`
const loginDeps = ({ deps }: LoginScope) => ({
  cipher: deps.keys.cipher,
  outbound: deps.outbound,
  now: deps.now,
})

/** Sends the browser to the upstream login, bound to it by the login cookie. */
async function startOpenIdLogin(
  scope: LoginScope,
  row: AuthorizationRequestRow,
  provider: LoginProviderRow,
  browser: string | undefined,
): Promise<AuthorizationStep> {
  if (!isOpenIdProvider(provider)) return refused(scope, row, 'the login provider of this credential is gone')
  const state = newHandle()
  const value = browser ?? newLoginBrowser()
  try {
    const redirectUri = callbackUrl(scope)
    const { url, secrets } = await startLogin(provider, { redirectUri, state }, loginDeps(scope))
    await scope.requests.startLogin(row.id, {
      loginStateHash: codeHash(state),
      loginSecretsEncrypted: scope.deps.keys.cipher.encrypt({ ...secrets }, secretsAad(scope, row.id)),
      loginProviderId: provider.id,
      loginBrowserHash: codeHash(value),
    })
    return { redirect: url, cookie: loginCookie(value, scope.cookiePath, LOGIN_SECONDS) }
  } catch (error) {
    const { log } = scope.deps
    log.warn({ tenantId: scope.tenantId, loginProviderId: provider.id, err: error }, 'login provider failed')
    return refused(scope, row, 'the login provider is not available')
  }
}

/** What the upstream provider's redirect carries (OIDC Core §3.1.2.5, §3.1.2.6; RFC 9207 `iss`). */
export interface OpenIdCallback {
  state?: string
  code?: string
  error?: string
  iss?: string
}

/**
 * The browser comes back from the upstream provider (OIDC Core §3.1.2.5), with the login
 * cookie of the browser sent there; `iss` is checked per RFC 9207.
 */
export async function openIdCallback(
  scope: LoginScope,
  query: OpenIdCallback,
  cookie?: string,
): Promise<AuthorizationStep> {
  const { deps, requests } = scope
  const row = query.state ? await requests.takeLoginState(codeHash(query.state), deps.now()) : undefined
  if (!row?.loginSecretsEncrypted || !row.loginProviderId)
    throw new ProtocolError('invalid_request', 'unknown, expired or used login state')
  const browser = loginBrowserOf(cookie)
  if (!browser || codeHash(browser) !== row.loginBrowserHash) {
    await requests.fail(row.id)
    throw new ProtocolError('invalid_request', 'this login was not started in this browser')
  }
  if (query.error || !query.code) return denied(scope, row, 'the holder did not log in')
  const secrets = deps.keys.cipher.decrypt<LoginSecrets>(row.loginSecretsEncrypted, secretsAad(scope, row.id))
  try {
    return await finishOpenIdLogin(scope, row, { code: query.code, iss: query.iss, secrets })
  } catch (error) {
    const context = { tenantId: scope.tenantId, loginProviderId: row.loginProviderId, err: error }
    deps.log.warn(context, 'holder login failed')
    return denied(scope, row, error instanceof DomainError ? error.detail : 'the login failed')
  }
}

/** The upstream code redeemed and the ID token verified: the holder is the provider's user. */
async function finishOpenIdLogin(
  scope: LoginScope,
  row: AuthorizationRequestRow,
  answer: { code: string; iss: string | undefined; secrets: LoginSecrets },
): Promise<AuthorizationStep> {
  const provider = await scope.loginProvider(row.loginProviderId as string)
  if (!provider || !isOpenIdProvider(provider))
    return denied(scope, row, 'the login provider of this credential is gone')
  const user = await finishLogin(provider, { ...answer, redirectUri: callbackUrl(scope) }, loginDeps(scope))
  const outcome = await completeLogin(scope, row, openIdHolder(user))
  return 'code' in outcome ? toWallet(scope, row, outcome) : denied(scope, row, outcome.denied)
}

/**
 * The holder as the upstream provider vouched for them: `userAuthentication.claims` maps a field's
 * path (joined by '.') to the name of a user claim; an attribute provider is told the user.
 */
export function openIdHolder(user: AuthenticatedUser): HolderLogin {
  return {
    mappedClaims: (config) => userMappedClaims(config, user),
    holder: { user: { issuer: user.issuer, sub: user.sub, claims: userClaims(user.claims) } },
  }
}

function userMappedClaims(config: MappedConfig, user: AuthenticatedUser): Claims {
  const mapping = config.userAuthentication?.claims ?? {}
  const claims: Claims = {}
  for (const field of config.fields) {
    const path = claimPath(field)
    const source = mapping[path.join('.')]
    if (typeof source === 'string' && user.claims[source] !== undefined)
      setAt(claims, path, user.claims[source])
  }
  return claims
}

function setAt(target: Claims, path: string[], value: unknown) {
  let node = target
  for (const key of path.slice(0, -1)) {
    if (!isObject(node[key])) node[key] = {}
    node = node[key] as Claims
  }
  node[path[path.length - 1] as string] = value
}
