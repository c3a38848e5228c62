import { randomBytes } from 'node:crypto'
import { newId } from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import type { GrantScope } from './grant-context'

/** Lifetime of an unused refresh token; each use hands out the next one (BCP 2.2.2 rotation). */
export const REFRESH_TOKEN_SECONDS = 7 * 86_400
/**
 * Absolute lifetime of a grant's refresh token chain, from the code redemption (BCP 4.14.2): enough
 * for a long deferred issuance, and a stolen chain cannot be kept alive by rotating it.
 */
export const REFRESH_GRANT_SECONDS = 30 * 86_400

/** The tenant's configurations with `refreshTokens`: a grant of one of them starts a refresh token chain. */
export async function refreshTokenConfigurations(scope: GrantScope): Promise<string[]> {
  const configs = await scope.deps.tenants.credentialConfigs(scope.tenantId)
  return configs.filter((c) => c.refreshTokens).map((c) => c.id)
}

/** Whether one of the configurations has `refreshTokens`, so their grant starts a refresh token chain. */
export async function wantsRefreshTokens(scope: GrantScope, configurationIds: string[]): Promise<boolean> {
  return (await refreshTokenConfigurations(scope)).some((id) => configurationIds.includes(id))
}

/** A fresh refresh token (256 bits). */
export const newRefreshToken = () => randomBytes(32).toString('base64url')

/**
 * OpenID4VCI §6.2 for the pre-authorized code grant: when an offered configuration has
 * `refreshTokens`, the redeemed code starts a refresh token chain as a code does (same rotation,
 * reuse revocation, DPoP binding and lifetimes), so a wallet can keep polling a deferred
 * credential beyond its access token. Undefined when no configuration wants one.
 */
export async function startRefreshChain(
  scope: GrantScope,
  grant: {
    sessionId: string
    configurationIds: string[]
    clientId: string
    dpopJkt: string | undefined
    attestedClientId: string | undefined
  },
): Promise<string | undefined> {
  if (!(await wantsRefreshTokens(scope, grant.configurationIds))) return undefined
  const refreshToken = newRefreshToken()
  const now = scope.deps.now().getTime()
  await scope.requests.insertGrant({
    id: newId('grt'),
    requestUriHash: codeHash(randomBytes(32).toString('base64url')),
    clientId: grant.clientId,
    redirectUri: '',
    codeChallenge: '',
    credentialConfigurationIds: grant.configurationIds,
    detailConfigurationIds: [],
    sessionId: grant.sessionId,
    dpopJkt: grant.dpopJkt ?? null,
    attestedClientId: grant.attestedClientId ?? null,
    refreshTokenHash: codeHash(refreshToken),
    expiresAt: new Date(now + REFRESH_TOKEN_SECONDS * 1000),
    grantExpiresAt: new Date(now + REFRESH_GRANT_SECONDS * 1000),
  })
  return refreshToken
}
