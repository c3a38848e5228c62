import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { tenants } from './tenants'

/**
 * API clients. `client_id` is unique across the service because the token endpoint identifies a
 * client before it knows its tenant; `tenant_id` is null for operator clients (spec §5 rule 3).
 */
export const clients = pgTable(
  'clients',
  {
    clientId: text().primaryKey(),
    tenantId: text().references(() => tenants.id, { onDelete: 'cascade' }),
    description: text(),
    secretHash: text().notNull(),
    roles: text().array().notNull(),
    allowedPresentationConfigs: text().array(),
    allowedIssuanceConfigs: text().array(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    secretRotatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index().on(t.tenantId, t.clientId)],
)
export type ClientRow = typeof clients.$inferSelect
