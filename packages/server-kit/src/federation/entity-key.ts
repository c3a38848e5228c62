import type { TenantCache } from '../tenant-cache'

/**
 * The key chain whose key signs the tenant's entity statements, when it is a federation member.
 * Kept apart (OpenID Federation 1.0 §3, the `jwks` claim: "The public keys ... SHOULD NOT be used
 * in other protocols"): it is published only in the
 * entity configurations' `jwks`, never in the key sets that credentials, requests or tokens are
 * checked against.
 */
export async function federationKeyChainOf(
  tenants: Pick<TenantCache, 'federation'>,
  tenantId: string,
): Promise<string | undefined> {
  return (await tenants.federation(tenantId))?.keyChainId
}
