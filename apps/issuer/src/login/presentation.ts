import { mapPresentedClaims, ProtocolError } from '@credential-service/core-domain'
import { codeHash, selectClaims } from '@credential-service/crypto'
import {
  type AuthorizationRequestRow,
  type LoginProviderRow,
  PRESENTATION_LOGIN_CREATOR,
} from '@credential-service/db-schema'
import { createPresentationSession } from '@credential-service/server-kit'
import { loginCookie, newLoginBrowser } from './login-browser'
import type { HolderLogin } from './login-claims'
import type { LoginKind, LoginStart } from './login-kind'
import { LOGIN_SECONDS, type LoginScope } from './login-scope'
import { type PresentationPage, presentationPage } from './presentation-page'
import { refused } from './wallet-redirect'

/**
 * The login kind `presentation`: the holder presents a credential (OpenID4VP 1.0) as the provider's
 * presentation configuration asks. In the browser, /authorize shows the request (this file); the
 * page's poll and the same-device return finish it (presentation-finish.ts). Interactive
 * Authorization asks for the presentation inline when the wallet can.
 */
export const presentationLogin: LoginKind<'presentation'> = {
  kind: 'presentation',
  start: startPresentationLogin,
  interactions: ['presentation', 'web'],
}

/** The login pages' paths under the issuer: `/status` (the poll) and `/return` (same-device). */
export const presentationUrl = (scope: LoginScope) => `${scope.issuerUrl}/authorize/presentation`

/** The tenant's issuer display name for the login pages. */
export async function titleOf(scope: LoginScope) {
  return (await scope.deps.tenants.tenant(scope.tenantId))?.name ?? 'Credential issuer'
}

/**
 * A login by presenting a credential: two sessions for the provider's presentation configuration,
 * one cross-device (a QR code; done when this browser's page sees it verified) and one same-device
 * (its redirect comes back here with a response code, §13.3, accepted only from this browser,
 * §14.2), and the page showing both, bound to the browser by the login cookie.
 */
async function startPresentationLogin(
  scope: LoginScope,
  row: AuthorizationRequestRow,
  provider: LoginProviderRow,
  browser: string | undefined,
): Promise<LoginStart> {
  const { deps, tenantId } = scope
  const config = provider.presentationConfigId
    ? await deps.tenants.presentationConfig(tenantId, provider.presentationConfigId)
    : undefined
  if (!config) return refused(scope, row, 'the presentation configuration of this login is gone')
  const value = browser ?? newLoginBrowser()
  const lifetimeSeconds = Math.max(1, Math.floor((row.expiresAt.getTime() - deps.now().getTime()) / 1000))
  const common = {
    config,
    responseMode: config.responseMode,
    lifetimeSeconds,
    webhookEndpointId: null,
    // Not a client id (those have no '/'): the retention job knows these sessions by it.
    createdByClientId: `${PRESENTATION_LOGIN_CREATOR}${provider.id}`.slice(0, 200),
  }
  const request = new URLSearchParams({ request: row.id })
  let shown: PresentationPage
  try {
    const crossDevice = await createPresentationSession(deps, tenantId, common)
    const sameDevice = await createPresentationSession(deps, tenantId, {
      ...common,
      redirectUri: `${presentationUrl(scope)}/return?${request}`,
    })
    const started = await scope.requests.startPresentationLogin(row.id, {
      loginProviderId: provider.id,
      loginBrowserHash: codeHash(value),
      presentationSessionId: crossDevice.id,
      sameDevicePresentationSessionId: sameDevice.id,
    })
    if (!started)
      throw new ProtocolError('invalid_request', 'this authorization request is no longer pending')
    shown = {
      title: await titleOf(scope),
      crossDeviceUri: crossDevice.authorizationRequestUri,
      sameDeviceUri: sameDevice.authorizationRequestUri,
      statusUrl: `${presentationUrl(scope)}/status?${request}`,
    }
  } catch (error) {
    if (error instanceof ProtocolError) throw error
    deps.log.warn({ tenantId, loginProviderId: provider.id, err: error }, 'presentation login failed')
    return refused(scope, row, 'the presentation login is not available')
  }
  return { page: await presentationPage(shown), cookie: loginCookie(value, scope.cookiePath, LOGIN_SECONDS) }
}

/**
 * The holder as the presented credentials show them (claims per DCQL credential query id,
 * verified): `userAuthentication.claims` maps a field to a presented claims path; an attribute
 * provider is told the presentation.
 */
export function presentedHolder(
  presentationConfigId: string,
  presented: Record<string, Record<string, unknown>[]>,
): HolderLogin {
  return {
    mappedClaims: (config) =>
      mapPresentedClaims(config.fields, config.userAuthentication?.claims ?? {}, presented, selectClaims),
    holder: { presentation: { presentationConfigId, credentials: presented } },
  }
}
