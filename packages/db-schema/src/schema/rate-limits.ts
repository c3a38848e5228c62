import { integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

/**
 * Request and failure counters of the rate limits when RATE_LIMIT_STORE=postgres, shared by every
 * process: one row per counted key (limit name and subject, e.g. `wallet-ip:token:203.0.113.7`),
 * counting in a fixed window that ends at `reset_at`. Rows past their window are purged.
 */
export const rateLimits = pgTable('rate_limits', {
  key: text().primaryKey(),
  count: integer().notNull(),
  resetAt: timestamp({ withTimezone: true }).notNull(),
})
