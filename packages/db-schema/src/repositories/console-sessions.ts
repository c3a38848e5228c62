import { and, eq, gt, lt, or, sql } from 'drizzle-orm'
import type { Database } from '../database'
import { consoleSessions } from '../schema'

/** A live console session as the management process uses it. */
export interface ConsoleSessionRecord {
  clientId: string
  tenantId: string | null
  createdAt: Date
  expiresAt: Date
}

// The database's clock, the one every management process shares.
const secondsAgo = (seconds: number) => sql`now() - ${seconds} * interval '1 second'`

/**
 * The console's server-side sessions (issue 42), keyed by the SHA-256 of the cookie. Timeouts are
 * read on the database's clock, so every process ends a session at the same moment.
 */
export function createConsoleSessionRepository(db: Database, timeouts: { idleSeconds: number }) {
  const lapsed = or(
    lt(consoleSessions.expiresAt, sql`now()`),
    lt(consoleSessions.lastSeenAt, secondsAgo(timeouts.idleSeconds)),
  )
  return {
    /** Starts a session that ends at the latest `maxSeconds` from now; lapsed ones are dropped. */
    async create(input: { id: string; clientId: string; tenantId: string | null; maxSeconds: number }) {
      await db.delete(consoleSessions).where(lapsed)
      const [row] = await db
        .insert(consoleSessions)
        .values({
          id: input.id,
          clientId: input.clientId,
          tenantId: input.tenantId,
          expiresAt: sql`now() + ${input.maxSeconds} * interval '1 second'`,
        })
        .returning()
      return row as ConsoleSessionRecord
    },

    /**
     * The session if it is still live, its idle clock restarted: one statement per console request.
     * Undefined when it ended (signed out, timed out, its client or tenant deleted, the client's
     * secret rotated through the API).
     */
    async touch(id: string): Promise<ConsoleSessionRecord | undefined> {
      const [row] = await db
        .update(consoleSessions)
        .set({ lastSeenAt: sql`now()` })
        .where(
          and(
            eq(consoleSessions.id, id),
            gt(consoleSessions.expiresAt, sql`now()`),
            gt(consoleSessions.lastSeenAt, secondsAgo(timeouts.idleSeconds)),
          ),
        )
        .returning({
          clientId: consoleSessions.clientId,
          tenantId: consoleSessions.tenantId,
          createdAt: consoleSessions.createdAt,
          expiresAt: consoleSessions.expiresAt,
        })
      return row
    },

    async delete(id: string): Promise<void> {
      await db.delete(consoleSessions).where(eq(consoleSessions.id, id))
    },
  }
}

export type ConsoleSessionRepository = ReturnType<typeof createConsoleSessionRepository>
