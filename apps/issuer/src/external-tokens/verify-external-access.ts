import type { AuthServerRow } from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import { type AccessGrant, checkSender, type ResourceRequest, refusedToken } from '../grants/access-grant'
import type { DpopDeps } from '../services/dpop'
import type { TenantScope } from '../tenant-scope'
import { checkToken, type ExternalTokens, serverOf, TokenRefused } from './check-token'
import { tokenAuthorisation } from './token-grant'
import { tokenSession } from './token-session'

export type ExternalTokenDeps = { externalTokens: ExternalTokens }

/**
 * An access token of one of the tenant's external authorization servers at a protected endpoint:
 * checked (check-token.ts) for this credential issuer, its sender constraint as a local token's
 * (RFC 9449), then bound to its issuance session (token-session.ts). Its grant is what the
 * credential, deferred and notification endpoints work with, as with a local token.
 */
export async function verifyExternalAccess(
  scope: TenantScope<ProtocolDeps & DpopDeps & ExternalTokenDeps>,
  request: ResourceRequest,
  token: { scheme: 'DPoP' | 'Bearer'; accessToken: string },
  servers: AuthServerRow[],
): Promise<AccessGrant> {
  const { deps, tenantId } = scope
  let checked: Awaited<ReturnType<typeof checkToken>>
  let server: AuthServerRow
  try {
    server = serverOf(token.accessToken, servers)
    checked = await checkToken(deps.externalTokens, server, token.accessToken, {
      audience: scope.issuerUrl,
      now: deps.now(),
      clientSecret: () =>
        server.clientSecretEncrypted
          ? deps.keys.cipher.decrypt<string>(
              server.clientSecretEncrypted,
              `auth-server:${tenantId}/${server.id}`,
            )
          : undefined,
    })
  } catch (error) {
    if (error instanceof TokenRefused) throw refusedToken(token.scheme, error.message)
    throw error
  }
  const jkt = await checkSender(scope, request, { ...token, cnf: checked.claims.cnf })
  const configs = await deps.tenants.credentialConfigs(tenantId)
  const authorisation = tokenAuthorisation(server, checked.claims, configs)
  try {
    const { session, configurationIds } = await tokenSession(scope, {
      server,
      key: checked.key,
      claims: checked.claims,
      authorisation,
      configs,
    })
    return {
      sessionId: session.id,
      configurationIds,
      ...(authorisation.credentialIdentifiers
        ? { credentialIdentifiers: authorisation.credentialIdentifiers }
        : {}),
      ...(jkt ? { dpopJkt: jkt } : {}),
    }
  } catch (error) {
    if (error instanceof TokenRefused) throw refusedToken(token.scheme, error.message)
    throw error
  }
}
