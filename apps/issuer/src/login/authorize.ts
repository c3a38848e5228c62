import { type AuthorizationRequest, ProtocolError, REQUEST_URI_PREFIX } from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import { issueCode } from './issue-code'
import { loginBrowserOf } from './login-browser'
import type { LoginStart } from './login-kind'
import { configsOf, LOGIN_SECONDS, type LoginScope } from './login-scope'
import { loginProviderOf } from './pushed-request'
import { loginKindOf } from './registry'
import { refused, toWallet } from './wallet-redirect'

/**
 * Authorization endpoint (RFC 6749 §4.1.1 via PAR §4), with a parsed `client_id` + pushed
 * `request_uri` (zAuthorizationRequest): the login of the requested configurations' provider
 * starts, in the way of its kind (registry.ts). Errors before the request is known are thrown
 * (rendered as JSON, never a redirect to an unchecked URI). `cookie` is the browser's Cookie
 * header: a reload before the login completed restarts the login in the same browser.
 */
export async function authorize(
  scope: LoginScope,
  query: AuthorizationRequest,
  cookie?: string,
): Promise<LoginStart> {
  const { deps, requests } = scope
  const now = deps.now()
  const requestUriHash = codeHash(query.request_uri.slice(REQUEST_URI_PREFIX.length))
  const browser = loginBrowserOf(cookie)
  const row =
    (await requests.takeRequestUri(requestUriHash, query.client_id, now, {
      expiresAt: new Date(now.getTime() + LOGIN_SECONDS * 1000),
    })) ??
    (browser
      ? await requests.retakeRequestUri(requestUriHash, query.client_id, codeHash(browser), now)
      : undefined)
  if (!row)
    throw new ProtocolError(
      'invalid_request',
      'request_uri is unknown, expired, used or pushed by another client',
    )
  const providerId = loginProviderOf(await configsOf(scope, row.credentialConfigurationIds))
  if (providerId) {
    const provider = await scope.loginProvider(providerId)
    if (!provider) return refused(scope, row, 'the login provider of this credential is gone')
    return loginKindOf(provider).start(scope, row, provider, browser)
  }
  // An offer's own claims (or its attribute provider) stand for the holder: no login needed.
  if (row.sessionId) return toWallet(scope, row, { code: await issueCode(scope, row, row.sessionId) })
  return refused(scope, row, 'these credentials need an offer: no holder login is configured')
}
