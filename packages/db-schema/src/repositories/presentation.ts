import { and, eq, gt } from 'drizzle-orm'
import type { Database } from '../database'
import { type PresentationSessionRow, presentationSessions } from '../schema'

export type NewPresentationSession = Omit<typeof presentationSessions.$inferInsert, 'tenantId'>

/** Presentation sessions of one tenant. The response is accepted once: a conditional update wins. */
export function createPresentationSessionRepository(db: Database, tenantId: string) {
  const inTenant = eq(presentationSessions.tenantId, tenantId)
  return {
    async insert(row: NewPresentationSession): Promise<PresentationSessionRow> {
      const [inserted] = await db
        .insert(presentationSessions)
        .values({ ...row, tenantId })
        .returning()
      return inserted as PresentationSessionRow
    },

    async get(id: string): Promise<PresentationSessionRow | undefined> {
      const [row] = await db
        .select()
        .from(presentationSessions)
        .where(and(inTenant, eq(presentationSessions.id, id)))
      return row
    },

    /** The open request behind a request or response URI; marks the request fetched. */
    async fetchRequest(requestId: string, at: Date): Promise<PresentationSessionRow | undefined> {
      const [row] = await db
        .update(presentationSessions)
        .set({ requestFetchedAt: at, updatedAt: new Date() })
        .where(
          and(
            inTenant,
            eq(presentationSessions.requestId, requestId),
            eq(presentationSessions.status, 'pending'),
            gt(presentationSessions.expiresAt, at),
          ),
        )
        .returning()
      return row
    },

    async byRequestId(requestId: string): Promise<PresentationSessionRow | undefined> {
      const [row] = await db
        .select()
        .from(presentationSessions)
        .where(and(inTenant, eq(presentationSessions.requestId, requestId)))
      return row
    },

    /** Ends a pending session with its outcome; undefined when another response came first. */
    async finish(
      id: string,
      outcome: {
        status: 'verified' | 'failed'
        result?: Record<string, unknown> | null
        failureReason?: string | null
        responseCodeHash?: string | null
      },
      at: Date,
    ): Promise<PresentationSessionRow | undefined> {
      const [row] = await db
        .update(presentationSessions)
        .set({
          status: outcome.status,
          result: outcome.result ?? null,
          failureReason: outcome.failureReason ?? null,
          responseCodeHash: outcome.responseCodeHash ?? null,
          responseReceivedAt: at,
          updatedAt: new Date(),
        })
        .where(and(inTenant, eq(presentationSessions.id, id), eq(presentationSessions.status, 'pending')))
        .returning()
      return row
    },

    /** Records the webhook outcome; drops the claims when the tenant keeps nothing after delivery. */
    async delivered(
      id: string,
      outcome: { status: string; attempts: number; lastError: string | null },
      dropResult: boolean,
    ) {
      await db
        .update(presentationSessions)
        .set({
          deliveryStatus: outcome.status,
          deliveryAttempts: outcome.attempts,
          deliveryError: outcome.lastError,
          ...(dropResult && outcome.status === 'delivered' ? { result: null } : {}),
          updatedAt: new Date(),
        })
        .where(and(inTenant, eq(presentationSessions.id, id)))
    },
  }
}
export type PresentationSessionRepository = ReturnType<typeof createPresentationSessionRepository>
