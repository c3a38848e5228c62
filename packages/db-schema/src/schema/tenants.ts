import { pgTable, text, timestamp } from 'drizzle-orm/pg-core'

export const tenants = pgTable('tenants', {
  id: text().primaryKey(),
  name: text().notNull(),
  description: text(),
  /** `keep` or `drop-after-delivery`: what happens to verified presentation claims once delivered. */
  presentationRetention: text().notNull().default('keep'),
  createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
})
export type TenantRow = typeof tenants.$inferSelect
