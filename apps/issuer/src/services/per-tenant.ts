/**
 * `build(tenantId)` once per tenant: the issuer's services and their repositories are stateless
 * per tenant, and building them on every request cost more than some requests' own work. The
 * tenant id comes from the URL before the tenant is known to exist, so the memo is bounded
 * (cleared whole when full).
 */
export function perTenant<T>(build: (tenantId: string) => T, limit = 1000): (tenantId: string) => T {
  const built = new Map<string, T>()
  return (tenantId) => {
    let value = built.get(tenantId)
    if (value === undefined) {
      if (built.size >= limit) built.clear()
      value = build(tenantId)
      built.set(tenantId, value)
    }
    return value
  }
}
