import { and, asc, eq, type SQL } from 'drizzle-orm'
import type { Database, Executor } from '../database'
import { issuanceNotifications } from '../schema'

/** Notification ids of one tenant's issuance sessions (OpenID4VCI §11). */
export function createNotificationRepository(db: Database, tenantId: string) {
  const byId = (id: string): SQL =>
    and(eq(issuanceNotifications.tenantId, tenantId), eq(issuanceNotifications.id, id)) as SQL
  return {
    /** Records the wallet's event on a notification of `sessionId`; undefined when it is not one. */
    async record(
      id: string,
      sessionId: string,
      event: string,
      description: string | undefined,
      at: Date,
      tx: Executor = db,
    ) {
      const [row] = await tx
        .update(issuanceNotifications)
        .set({ event, eventDescription: description ?? null, receivedAt: at, deliveryStatus: 'pending' })
        .where(and(byId(id), eq(issuanceNotifications.sessionId, sessionId)))
        .returning()
      return row
    },

    async delivered(
      id: string,
      outcome: { status: string; attempts: number; lastError: string | null },
      tx: Executor = db,
    ): Promise<void> {
      await tx
        .update(issuanceNotifications)
        .set({
          deliveryStatus: outcome.status,
          deliveryAttempts: outcome.attempts,
          deliveryError: outcome.lastError,
        })
        .where(byId(id))
    },

    ofSession(sessionId: string) {
      return db
        .select()
        .from(issuanceNotifications)
        .where(
          and(eq(issuanceNotifications.tenantId, tenantId), eq(issuanceNotifications.sessionId, sessionId)),
        )
        .orderBy(asc(issuanceNotifications.createdAt))
    },
  }
}
