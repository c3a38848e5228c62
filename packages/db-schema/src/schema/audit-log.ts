import { index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

/**
 * Who changed what. No foreign key to tenants: the trail of a deleted tenant is kept.
 * `tenant_id` is null for operator-level actions (creating tenants, operator clients).
 */
export const auditLog = pgTable(
  'audit_log',
  {
    id: text().primaryKey(),
    tenantId: text(),
    actorClientId: text().notNull(),
    action: text().notNull(),
    resourceType: text().notNull(),
    resourceId: text().notNull(),
    detail: jsonb().$type<Record<string, unknown>>(),
    at: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  // The second index serves the operator's view across tenants.
  (t) => [index().on(t.tenantId, t.at), index('audit_log_at').on(t.at, t.id)],
)
export type AuditLogRow = typeof auditLog.$inferSelect
