import { sql } from 'drizzle-orm'
import { check, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'
import { tenants } from './tenants'

/**
 * Key chains (spec §2.4). The JWK columns hold one encrypted JWK each. The CHECK is the last line of
 * defence of spec §7: a write that leaves a non-`db` key chain without `external_key_id` is aborted.
 */
export const keyChains = pgTable(
  'key_chains',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    id: text().notNull(),
    description: text(),
    kmsProvider: text().notNull().default('db'),
    externalKeyId: text(),
    activeJwk: text().notNull(),
    rootJwk: text(),
    previousJwk: text(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    check('key_chains_kms_provider_known', sql`${t.kmsProvider} in ('db', 'vault', 'aws-kms')`),
    check(
      'key_chains_external_key_id_required',
      sql`${t.kmsProvider} = 'db' or ${t.externalKeyId} is not null`,
    ),
  ],
)
export type KeyChainRow = typeof keyChains.$inferSelect
