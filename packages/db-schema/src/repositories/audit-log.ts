import {
  type AuditAction,
  type AuditEvent,
  type AuditEventQuery,
  type AuditResourceType,
  newId,
  type Page,
} from '@credential-service/core-domain'
import { and, desc, eq, gte, lt, type SQL } from 'drizzle-orm'
import { announceTenantChange } from '../changes'
import type { Database, Executor } from '../database'
import { type AuditLogRow, auditLog } from '../schema'
import { afterKey, decodeKeyCursor, keyCursorText, toKeyPage } from './pagination'

export interface AuditEntry {
  tenantId: string | null
  actorClientId: string
  action: AuditAction
  resourceType: AuditResourceType
  resourceId: string
  /** Never secrets: ids, changed field names (`fields`, the only part the audit API shows). */
  detail?: Record<string, unknown>
}

// Sessions and credential statuses are not part of what the tenant caches hold: no announcement.
const UNCACHED: ReadonlySet<AuditResourceType> = new Set(['session', 'credential-status', 'webhook-delivery'])

/**
 * Records a change; every audited change of a tenant's configuration is also announced to the
 * caches of all processes.
 */
export async function recordAudit(tx: Executor, entry: AuditEntry): Promise<void> {
  await tx.insert(auditLog).values({ id: newId('aud'), ...entry, detail: entry.detail ?? null })
  if (entry.tenantId && !UNCACHED.has(entry.resourceType)) await announceTenantChange(tx, entry.tenantId)
}

/** What the audit API shows of a row: names of changed fields, never the values in `detail`. */
function toAuditEvent(row: AuditLogRow): AuditEvent {
  const fields = row.detail?.fields
  return {
    id: row.id,
    tenantId: row.tenantId,
    actorClientId: row.actorClientId,
    action: row.action as AuditAction,
    resourceType: row.resourceType as AuditResourceType,
    resourceId: row.resourceId,
    fields: Array.isArray(fields) ? fields.filter((field): field is string => typeof field === 'string') : [],
    at: row.at.toISOString(),
  }
}

/**
 * The audit trail of one tenant, or of every tenant (and operator-level changes) for
 * `{ allTenants: true }`, which only operators get. Newest first; the trail of a deleted tenant stays
 * readable.
 */
export function createAuditLogRepository(db: Database, scope: { tenantId: string } | { allTenants: true }) {
  return {
    async list(query: AuditEventQuery): Promise<Page<AuditEvent>> {
      const after = decodeKeyCursor(query.cursor)
      const rows = await db
        .select({ row: auditLog, key: keyCursorText(auditLog.at) })
        .from(auditLog)
        .where(
          and(
            'tenantId' in scope ? eq(auditLog.tenantId, scope.tenantId) : undefined,
            query.action ? eq(auditLog.action, query.action) : undefined,
            query.resourceType ? eq(auditLog.resourceType, query.resourceType) : undefined,
            query.resourceId ? eq(auditLog.resourceId, query.resourceId) : undefined,
            query.since ? gte(auditLog.at, new Date(query.since)) : undefined,
            query.until ? lt(auditLog.at, new Date(query.until)) : undefined,
            after ? (afterKey(auditLog.at, auditLog.id, after) as SQL) : undefined,
          ),
        )
        .orderBy(desc(auditLog.at), desc(auditLog.id))
        .limit(query.limit + 1)
      return toKeyPage(
        rows.map(({ row, key }) => ({ item: toAuditEvent(row), key: { at: key, id: row.id } })),
        query.limit,
      )
    },
  }
}
export type AuditLogRepository = ReturnType<typeof createAuditLogRepository>
