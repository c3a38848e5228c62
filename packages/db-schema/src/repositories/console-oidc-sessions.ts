import { and, eq, gt, lt, or, sql } from 'drizzle-orm'
import type { Database } from '../database'
import { type ConsoleOidcSessionRow, consoleOidcSessions } from '../schema'

const t = consoleOidcSessions
// The database's clock, the one every management process shares.
const secondsAgo = (seconds: number) => sql`now() - ${seconds} * interval '1 second'`

export interface NewConsoleOidcSession {
  id: string
  subject: string
  tenantId: string | null
  tokensEncrypted: string
  accessExpiresAt: Date
  maxSeconds: number
}

/**
 * The console's sessions in OIDC mode (issue 42), keyed by the SHA-256 of the cookie; timeouts on
 * the database's clock, as for `console_sessions`.
 */
export function createConsoleOidcSessionRepository(db: Database, timeouts: { idleSeconds: number }) {
  const live = and(gt(t.expiresAt, sql`now()`), gt(t.lastSeenAt, secondsAgo(timeouts.idleSeconds)))
  return {
    /** Starts a session; lapsed ones of anyone are dropped. */
    async create(input: NewConsoleOidcSession): Promise<ConsoleOidcSessionRow> {
      await db
        .delete(t)
        .where(or(lt(t.expiresAt, sql`now()`), lt(t.lastSeenAt, secondsAgo(timeouts.idleSeconds))))
      const [row] = await db
        .insert(t)
        .values({
          id: input.id,
          subject: input.subject,
          tenantId: input.tenantId,
          tokensEncrypted: input.tokensEncrypted,
          accessExpiresAt: input.accessExpiresAt,
          expiresAt: sql`now() + ${input.maxSeconds} * interval '1 second'`,
        })
        .returning()
      return row as ConsoleOidcSessionRow
    },

    /** The live session, its idle clock restarted (one statement per console request). */
    async touch(id: string): Promise<ConsoleOidcSessionRow | undefined> {
      const [row] = await db
        .update(t)
        .set({ lastSeenAt: sql`now()` })
        .where(and(eq(t.id, id), live))
        .returning()
      return row
    },

    /**
     * Renews the session's tokens unless another process did since `seen` (its access token
     * expiry): the row stays locked while `renew` asks the provider, so a rotating refresh token
     * is spent once across processes. `renew` answering undefined (the provider refused: its
     * session ended) deletes the session. Answers the row as it is afterwards.
     */
    async renew(
      id: string,
      seen: Date,
      renew: (
        row: ConsoleOidcSessionRow,
      ) => Promise<{ tokensEncrypted: string; accessExpiresAt: Date } | undefined>,
    ): Promise<ConsoleOidcSessionRow | undefined> {
      return db.transaction(async (tx) => {
        const [row] = await tx.select().from(t).where(eq(t.id, id)).for('update')
        if (!row) return undefined
        if (row.accessExpiresAt.getTime() !== seen.getTime()) return row
        const renewed = await renew(row)
        if (!renewed) {
          await tx.delete(t).where(eq(t.id, id))
          return undefined
        }
        const [updated] = await tx.update(t).set(renewed).where(eq(t.id, id)).returning()
        return updated
      })
    },

    async delete(id: string): Promise<void> {
      await db.delete(t).where(eq(t.id, id))
    },
  }
}
export type ConsoleOidcSessionRepository = ReturnType<typeof createConsoleOidcSessionRepository>
