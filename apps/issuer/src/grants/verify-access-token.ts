import { federationKeyChainOf, type ProtocolDeps } from '@credential-service/server-kit'
import { jwtVerify } from 'jose'
import { type ExternalTokenDeps, verifyExternalAccess } from '../external-tokens/verify-external-access'
import type { DpopDeps } from '../services/dpop'
import type { TenantScope } from '../tenant-scope'
import {
  type AccessGrant,
  checkSender,
  presentedToken,
  type ResourceRequest,
  refusedToken,
} from './access-grant'

export { type AccessGrant, invalidToken, type ResourceRequest } from './access-grant'

/**
 * Verifies the access token of a protected endpoint: signed by a key of this tenant, for this
 * issuer, unexpired; a DPoP-bound token (`cnf.jkt`) only as `Authorization: DPoP` with a proof
 * of that key over this request and token (RFC 9449 §7). A token this issuer did not sign is
 * tried against the tenant's external authorization servers, if it has any (OpenID4VCI 1.0
 * §12.2.4): the local tokens' path stays as it was.
 */
export async function verifyAccessToken(
  scope: TenantScope<ProtocolDeps & DpopDeps & ExternalTokenDeps>,
  request: ResourceRequest,
): Promise<AccessGrant> {
  const { deps, tenantId } = scope
  const issuer = scope.issuerUrl
  const token = presentedToken(request)
  let payload: Awaited<ReturnType<typeof jwtVerify>>['payload']
  try {
    payload = (
      await jwtVerify(
        token.accessToken,
        await deps.keys.verificationKeys(tenantId, await federationKeyChainOf(deps.tenants, tenantId)),
        {
          issuer,
          audience: issuer,
          typ: 'at+jwt',
          currentDate: deps.now(),
        },
      )
    ).payload
  } catch (_cause) {
    const servers = await deps.tenants.authServers(tenantId)
    if (!servers.length) throw refusedToken(token.scheme, 'the access token is invalid or expired')
    return verifyExternalAccess(scope, request, token, servers)
  }
  const jkt = await checkSender(scope, request, { ...token, cnf: payload.cnf })
  return {
    sessionId: String(payload.sub),
    configurationIds: (payload.credential_configuration_ids as string[]) ?? [],
    ...(payload.credential_identifiers
      ? { credentialIdentifiers: payload.credential_identifiers as Record<string, string> }
      : {}),
    ...(jkt ? { dpopJkt: jkt } : {}),
  }
}
