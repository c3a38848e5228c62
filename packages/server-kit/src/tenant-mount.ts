import { zTenantId } from '@credential-service/core-domain'
import { z } from 'zod'

/**
 * Paths, params and operation ids of a tenant-owned collection mounted twice (DESIGN.md):
 * `/api/tenants/{tenantId}/<collection>` and the token-tenant shorthand `/api/<collection>`.
 */
export function tenantMount<K extends string, S extends z.ZodType>(options: {
  collection: string
  tenantInPath: boolean
  itemKey: K
  itemSchema: S
}) {
  const tenantParam = options.tenantInPath ? { tenantId: zTenantId } : {}
  const base = options.tenantInPath
    ? `/api/tenants/:tenantId/${options.collection}`
    : `/api/${options.collection}`
  return {
    base,
    item: `${base}/:${options.itemKey}`,
    /** Operation ids differ per mount; the shorthand keeps the plain name. */
    op: (name: string) => (options.tenantInPath ? `${name}OfTenant` : name),
    listParams: z.object(tenantParam),
    itemParams: z.object({ ...tenantParam, [options.itemKey]: options.itemSchema } as { [P in K]: S }),
  }
}
