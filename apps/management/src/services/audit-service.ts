import {
  type AuditEvent,
  ForbiddenError,
  isOperator,
  NotFoundError,
  type OperatorAuditEventQuery,
  type Page,
  type Principal,
} from '@credential-service/core-domain'
import { createAuditLogRepository, type Database } from '@credential-service/db-schema'

/**
 * The audit trail (who changed what, when; never values). A tenant's admin reads its own tenant;
 * an operator reads any tenant, or all of them with the operator-level changes.
 */
export function createAuditService(db: Database, actor: Principal) {
  return {
    /**
     * `tenantScope` is the tenant the route acts on (path, else the token's), null for an operator
     * on the shorthand route; `query.tenantId` narrows an operator's view to one tenant.
     */
    list(tenantScope: string | null, query: OperatorAuditEventQuery): Promise<Page<AuditEvent>> {
      const { tenantId: requested, ...filters } = query
      if (tenantScope !== null) {
        // A tenant-bound client naming another tenant learns nothing about it (S-100).
        if (requested !== undefined && requested !== tenantScope) throw new NotFoundError('tenant', requested)
        return createAuditLogRepository(db, { tenantId: tenantScope }).list(filters)
      }
      if (!isOperator(actor)) throw new ForbiddenError('only operator clients read the audit of every tenant')
      const scope = requested === undefined ? { allTenants: true as const } : { tenantId: requested }
      return createAuditLogRepository(db, scope).list(filters)
    },
  }
}
