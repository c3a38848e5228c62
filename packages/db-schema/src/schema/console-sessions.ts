import { index, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { clients } from './clients'
import { tenants } from './tenants'

/**
 * Signed-in admin console tabs (issue 42): the browser holds only an HttpOnly cookie whose
 * SHA-256 is `id`, so a database read gives no usable cookie. Shared by every management process;
 * a row ends at `expires_at` (absolute timeout), after the idle timeout since `last_seen_at`, on
 * sign-out, or with its client or tenant.
 */
export const consoleSessions = pgTable(
  'console_sessions',
  {
    id: text().primaryKey(),
    /** The API client that signed in (client credentials); its tokens are minted per process. */
    clientId: text()
      .notNull()
      .references(() => clients.clientId, { onDelete: 'cascade' }),
    /** The session's tenant; null for an operator. */
    tenantId: text().references(() => tenants.id, { onDelete: 'cascade' }),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    lastSeenAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [index().on(t.expiresAt)],
)
export type ConsoleSessionRow = typeof consoleSessions.$inferSelect
