import type { TrustListSource } from '@credential-service/core-domain'
import { index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'
import { tenants } from './tenants'

/**
 * Trust lists a tenant keeps (certificates credential issuers may chain to). A fetched list
 * (ETSI TS 119 612) keeps its last good content here, so every process uses the same certificates
 * and a failed fetch changes nothing but `lastError`.
 */
export const trustLists = pgTable(
  'trust_lists',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    id: text().notNull(),
    description: text(),
    source: jsonb().$type<TrustListSource>().notNull(),
    graceSeconds: integer().notNull(),
    /** PEM certificates of the last good content (a `pem` source: its own certificates). */
    certificates: text().array().notNull().default([]),
    listIssuedAt: timestamp({ withTimezone: true }),
    nextUpdate: timestamp({ withTimezone: true }),
    fetchedAt: timestamp({ withTimezone: true }),
    lastError: text(),
    lastErrorAt: timestamp({ withTimezone: true }),
    /** When a process may claim the list for its next fetch; null: never (a `pem` source). */
    nextRefreshAt: timestamp({ withTimezone: true }),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] }), index('trust_lists_due').on(t.nextRefreshAt)],
)
export type TrustListRow = typeof trustLists.$inferSelect
