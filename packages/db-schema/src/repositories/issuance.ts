import type { PageQuery } from '@credential-service/core-domain'
import { and, asc, eq, gt, type SQL, sql } from 'drizzle-orm'
import type { Database, Executor } from '../database'
import { type IssuanceSessionRow, issuanceNotifications, issuanceSessions, nonces } from '../schema'
import { decodeCursor, toPage } from './pagination'

export type NewIssuanceSession = Omit<typeof issuanceSessions.$inferInsert, 'tenantId'>

/** Issuance sessions of one tenant. Single-use steps are conditional updates: one caller wins. */
export function createIssuanceSessionRepository(db: Database, tenantId: string) {
  const byId = (id: string): SQL =>
    and(eq(issuanceSessions.tenantId, tenantId), eq(issuanceSessions.id, id)) as SQL
  const now = () => new Date()

  return {
    async insert(row: NewIssuanceSession, tx: Executor = db): Promise<IssuanceSessionRow> {
      const [inserted] = await tx
        .insert(issuanceSessions)
        .values({ ...row, tenantId })
        .returning()
      return inserted as IssuanceSessionRow
    },

    async get(id: string): Promise<IssuanceSessionRow | undefined> {
      const [row] = await db.select().from(issuanceSessions).where(byId(id))
      return row
    },

    async byCodeHash(codeHash: string): Promise<IssuanceSessionRow | undefined> {
      const [row] = await db
        .select()
        .from(issuanceSessions)
        .where(
          and(eq(issuanceSessions.tenantId, tenantId), eq(issuanceSessions.preAuthorizedCodeHash, codeHash)),
        )
      return row
    },

    async list(query: PageQuery & { status?: string | undefined }) {
      const after = decodeCursor(query.cursor)
      const rows = await db
        .select()
        .from(issuanceSessions)
        .where(
          and(
            eq(issuanceSessions.tenantId, tenantId),
            query.status ? eq(issuanceSessions.status, query.status) : undefined,
            after === undefined ? undefined : gt(issuanceSessions.id, after),
          ),
        )
        .orderBy(asc(issuanceSessions.id))
        .limit(query.limit + 1)
      return toPage(
        rows,
        query.limit,
        (r) => r.id,
        (r) => r,
      )
    },

    /** Marks a by-reference offer fetched; answers the row only while it is still open. */
    async fetchOffer(id: string, at: Date): Promise<IssuanceSessionRow | undefined> {
      const [row] = await db
        .update(issuanceSessions)
        .set({ offerFetchedAt: at, updatedAt: now() })
        .where(and(byId(id), eq(issuanceSessions.status, 'offered'), gt(issuanceSessions.expiresAt, at)))
        .returning()
      return row
    },

    /** A wrong transaction code: counts the attempt, and fails the session at `limit`. */
    async countTxCodeFailure(id: string, limit: number): Promise<IssuanceSessionRow | undefined> {
      const [row] = await db
        .update(issuanceSessions)
        .set({
          txCodeAttempts: sql`${issuanceSessions.txCodeAttempts} + 1`,
          status: sql`case when ${issuanceSessions.txCodeAttempts} + 1 >= ${limit} then 'failed' else ${issuanceSessions.status} end`,
          failureReason: sql`case when ${issuanceSessions.txCodeAttempts} + 1 >= ${limit} then 'too many wrong transaction codes' else ${issuanceSessions.failureReason} end`,
          updatedAt: now(),
        })
        .where(and(byId(id), eq(issuanceSessions.status, 'offered')))
        .returning()
      return row
    },

    /** Redeems the pre-authorized code: only one request moves `offered` to `token_issued`. */
    async redeem(id: string, at: Date): Promise<IssuanceSessionRow | undefined> {
      const [row] = await db
        .update(issuanceSessions)
        .set({ status: 'token_issued', tokenIssuedAt: at, updatedAt: now() })
        .where(and(byId(id), eq(issuanceSessions.status, 'offered'), gt(issuanceSessions.expiresAt, at)))
        .returning()
      return row
    },

    /** Fails the session with a reason shown to the integrator (never claim values). */
    async fail(id: string, reason: string): Promise<void> {
      await db
        .update(issuanceSessions)
        .set({ status: 'failed', failureReason: reason, updatedAt: now() })
        .where(byId(id))
    },

    /** Records an issued configuration; `completed` once every offered configuration was issued. */
    async recordIssued(id: string, configurationId: string, at: Date): Promise<void> {
      await db
        .update(issuanceSessions)
        .set({
          issuedConfigurationIds: sql`array(select distinct unnest(${issuanceSessions.issuedConfigurationIds} || array[${configurationId}]::text[]))`,
          status: sql`case when ${issuanceSessions.credentialConfigurationIds} <@ (${issuanceSessions.issuedConfigurationIds} || array[${configurationId}]::text[]) then 'completed' else 'credential_issued' end`,
          credentialIssuedAt: at,
          updatedAt: now(),
        })
        .where(byId(id))
    },
  }
}
export type IssuanceSessionRepository = ReturnType<typeof createIssuanceSessionRepository>

/** c_nonce values of one tenant. */
export function createNonceRepository(db: Database, tenantId: string) {
  return {
    async issue(value: string, expiresAt: Date): Promise<void> {
      await db.insert(nonces).values({ tenantId, value, expiresAt })
    },

    /** Consumes a nonce atomically: true for the one caller that finds it unexpired. */
    async consume(value: string, at: Date): Promise<boolean> {
      const rows = await db
        .delete(nonces)
        .where(and(eq(nonces.tenantId, tenantId), eq(nonces.value, value), gt(nonces.expiresAt, at)))
        .returning({ value: nonces.value })
      return rows.length === 1
    },
  }
}

/** Notification ids of one tenant's issuance sessions (OpenID4VCI §11). */
export function createNotificationRepository(db: Database, tenantId: string) {
  const byId = (id: string): SQL =>
    and(eq(issuanceNotifications.tenantId, tenantId), eq(issuanceNotifications.id, id)) as SQL
  return {
    async create(row: { id: string; sessionId: string; credentialConfigurationId: string }): Promise<void> {
      await db.insert(issuanceNotifications).values({ ...row, tenantId })
    },

    /** Records the wallet's event on a notification of `sessionId`; undefined when it is not one. */
    async record(id: string, sessionId: string, event: string, description: string | undefined, at: Date) {
      const [row] = await db
        .update(issuanceNotifications)
        .set({ event, eventDescription: description ?? null, receivedAt: at, deliveryStatus: 'pending' })
        .where(and(byId(id), eq(issuanceNotifications.sessionId, sessionId)))
        .returning()
      return row
    },

    async delivered(
      id: string,
      outcome: { status: string; attempts: number; lastError: string | null },
    ): Promise<void> {
      await db
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
