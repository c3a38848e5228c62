import { pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'

/**
 * Sessions someone streams live (`GET /api/sessions/{id}/events`): one row per session and
 * listening process, leased until `expires_at` and renewed while the stream is open. A trigger on
 * both session tables NOTIFYs `credential_service_session_events` with the session id when a
 * watched session's status changes or it is deleted, so unwatched sessions (nearly all) cost
 * their updates no NOTIFY. Rows of a process that died lapse with their lease.
 */
export const sessionWatches = pgTable(
  'session_watches',
  {
    sessionId: text().notNull(),
    /** The listening process (a random id per process). */
    watcherId: text().notNull(),
    expiresAt: timestamp({ withTimezone: true }).notNull(),
  },
  (table) => [primaryKey({ columns: [table.sessionId, table.watcherId] })],
)
