import { and, eq, lt, sql } from 'drizzle-orm'
import type { Database } from '../database'
import { sessionWatches } from '../schema'

/** NOTIFY channel of the session trigger (migration 0018): the payload is the session id. */
export const SESSION_EVENTS_CHANNEL = 'credential_service_session_events'

// The database's clock, the one every process shares.
const leaseEnd = (seconds: number) => sql`now() + ${seconds} * interval '1 second'`

/**
 * The leases of one process on the sessions it streams: while a lease holds, the session tables'
 * trigger NOTIFYs its status changes and deletion.
 */
export function createSessionWatchRepository(db: Database, watcherId: string) {
  return {
    async watch(sessionId: string, leaseSeconds: number): Promise<void> {
      await db
        .insert(sessionWatches)
        .values({ sessionId, watcherId, expiresAt: leaseEnd(leaseSeconds) })
        .onConflictDoUpdate({
          target: [sessionWatches.sessionId, sessionWatches.watcherId],
          set: { expiresAt: leaseEnd(leaseSeconds) },
        })
    },

    async unwatch(sessionId: string): Promise<void> {
      await db
        .delete(sessionWatches)
        .where(and(eq(sessionWatches.sessionId, sessionId), eq(sessionWatches.watcherId, watcherId)))
    },

    /** Extends this process's leases, and drops any process's that lapsed (one that died). */
    async renew(leaseSeconds: number): Promise<void> {
      await db
        .update(sessionWatches)
        .set({ expiresAt: leaseEnd(leaseSeconds) })
        .where(eq(sessionWatches.watcherId, watcherId))
      await db.delete(sessionWatches).where(lt(sessionWatches.expiresAt, sql`now()`))
    },
  }
}

export type SessionWatchRepository = ReturnType<typeof createSessionWatchRepository>
