import type { ProtocolDeps } from '@credential-service/server-kit'
import { perTenant } from './services/per-tenant'

/**
 * One tenant as the issuer's services see it, passed whole instead of `(deps, tenantId)`. Built once
 * per tenant (see perTenant): the issuer URL is computed here, not in every service.
 */
export interface TenantScope<D = ProtocolDeps> {
  readonly deps: D
  readonly tenantId: string
  /** The tenant's credential issuer identifier (OpenID4VCI §12.2.1), also its authorization server's. */
  readonly issuerUrl: string
}

export function tenantScope<D extends Pick<ProtocolDeps, 'publicUrl'>>(
  deps: D,
  tenantId: string,
): TenantScope<D> {
  return { deps, tenantId, issuerUrl: `${deps.publicUrl}/issuers/${tenantId}` }
}

/** A bounded memo of each tenant's scope, so a route builds one per tenant, not one per request. */
export function perTenantScope<D extends Pick<ProtocolDeps, 'publicUrl'>>(
  deps: D,
): (tenantId: string) => TenantScope<D> {
  return perTenant((tenantId) => tenantScope(deps, tenantId))
}
