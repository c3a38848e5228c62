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

/**
 * Console sessions in OIDC mode (issue 42): the backend-for-frontend holds the provider's tokens,
 * encrypted (MASTER_SECRET), and renews the access token with the refresh token at the provider;
 * the browser holds only the HttpOnly cookie whose SHA-256 is `id`. One process renews at a time
 * (the row is locked while it asks the provider), so a rotating refresh token is used once.
 */
export const consoleOidcSessions = pgTable(
  'console_oidc_sessions',
  {
    id: text().primaryKey(),
    /** Who signed in at the provider (`preferred_username`, else `sub`), for the console's header. */
    subject: text().notNull(),
    /** The token's tenant; null for an operator. */
    tenantId: text().references(() => tenants.id, { onDelete: 'cascade' }),
    /** `{ accessToken, refreshToken }`, encrypted and bound to the row id. */
    tokensEncrypted: text().notNull(),
    /** When the access token expires: renewed a minute before. */
    accessExpiresAt: timestamp({ withTimezone: true }).notNull(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    lastSeenAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [index().on(t.expiresAt)],
)
export type ConsoleOidcSessionRow = typeof consoleOidcSessions.$inferSelect
