import { pgTable, text, timestamp } from 'drizzle-orm/pg-core'

/** Service-wide facts, e.g. the fingerprint of the MASTER_SECRET the database was set up with. */
export const serviceSettings = pgTable('service_settings', {
  key: text().primaryKey(),
  value: text().notNull(),
  updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
})
