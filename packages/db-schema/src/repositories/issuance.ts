import { and, asc, eq, gt, lt, type SQL, sql } from 'drizzle-orm'
import type { Database, Executor } from '../database'
import { type IssuanceSessionRow, issuanceNotifications, issuanceSessions, nonces } from '../schema'
import { insertValues, param, prepared, preparedInsert } from './prepared'

const INSERT_COLUMNS = [
  'tenantId',
  'id',
  'status',
  'credentialConfigurationIds',
  'claims',
  'preAuthorizedCodeHash',
  'txCodeHash',
  'txCodeSpec',
  'byReference',
  'offerCodeEncrypted',
  'createdByClientId',
  'expiresAt',
]

const tenant = param('tenantId')
const id = param('id')
const at = param('at')
const sessionById = and(eq(issuanceSessions.tenantId, tenant), eq(issuanceSessions.id, id))
const openSession = and(
  sessionById,
  eq(issuanceSessions.status, 'offered'),
  gt(issuanceSessions.expiresAt, at),
)

// The statements of every issuance flow, prepared once per database.
const statements = {
  get: (db: Database) =>
    prepared(db, 'issuance_get', (d) => d.select().from(issuanceSessions).where(sessionById)),
  byCodeHash: (db: Database) =>
    prepared(db, 'issuance_by_code', (d) =>
      d
        .select()
        .from(issuanceSessions)
        .where(
          and(
            eq(issuanceSessions.tenantId, tenant),
            eq(issuanceSessions.preAuthorizedCodeHash, param('codeHash')),
          ),
        ),
    ),
  fetchOffer: (db: Database) =>
    prepared(db, 'issuance_fetch_offer', (d) =>
      d
        .update(issuanceSessions)
        .set({ offerFetchedAt: at, updatedAt: sql`now()` })
        .where(openSession)
        .returning(),
    ),
  redeem: (db: Database) =>
    prepared(db, 'issuance_redeem', (d) =>
      d
        .update(issuanceSessions)
        .set({ status: 'token_issued', tokenIssuedAt: at, updatedAt: sql`now()` })
        .where(openSession)
        .returning(),
    ),
  redeemByCode: (db: Database) =>
    prepared(db, 'issuance_redeem_by_code', (d) => {
      const txCodeHash = param('txCodeHash')
      return d
        .update(issuanceSessions)
        .set({ status: 'token_issued', tokenIssuedAt: at, updatedAt: sql`now()` })
        .where(
          and(
            eq(issuanceSessions.tenantId, tenant),
            eq(issuanceSessions.preAuthorizedCodeHash, param('codeHash')),
            eq(issuanceSessions.status, 'offered'),
            gt(issuanceSessions.expiresAt, at),
            sql`(${issuanceSessions.txCodeHash} is null or ${issuanceSessions.txCodeHash} = ${txCodeHash}::text)`,
          ),
        )
        .returning()
    }),
  recordIssued: (db: Database) =>
    prepared(db, 'issuance_record_issued', (d) => {
      const configurationId = sql`array[${param('configurationId')}]::text[]`
      // The notification id (OpenID4VCI §11) is recorded in the same statement.
      const notification = d.$with('notification').as(
        d
          .insert(issuanceNotifications)
          .values({
            tenantId: tenant,
            id: param('notificationId'),
            sessionId: id,
            credentialConfigurationId: param('configurationId'),
          })
          .returning({ id: issuanceNotifications.id }),
      )
      const completes = sql`${issuanceSessions.credentialConfigurationIds} <@ (${issuanceSessions.issuedConfigurationIds} || ${configurationId})`
      return d
        .with(notification)
        .update(issuanceSessions)
        .set({
          issuedConfigurationIds: sql`array(select distinct unnest(${issuanceSessions.issuedConfigurationIds} || ${configurationId}))`,
          status: sql`case when ${completes} then 'completed' else 'credential_issued' end`,
          // Data minimisation: once every credential is out, the offer's claims serve nothing.
          claims: sql`case when ${completes} then '{}'::jsonb else ${issuanceSessions.claims} end`,
          credentialIssuedAt: at,
          updatedAt: sql`now()`,
        })
        .where(sessionById)
    }),
  issueNonce: (db: Database) =>
    prepared(db, 'nonce_issue', (d) =>
      d.insert(nonces).values({ tenantId: tenant, value: param('value'), expiresAt: at }),
    ),
  consumeNonce: (db: Database) =>
    prepared(db, 'nonce_consume', (d) =>
      d
        .delete(nonces)
        .where(and(eq(nonces.tenantId, tenant), eq(nonces.value, param('value')), gt(nonces.expiresAt, at)))
        .returning({ value: nonces.value }),
    ),
}

export type NewIssuanceSession = Omit<typeof issuanceSessions.$inferInsert, 'tenantId'>

/** Issuance sessions of one tenant. Single-use steps are conditional updates: one caller wins. */
export function createIssuanceSessionRepository(db: Database, tenantId: string) {
  const byId = (id: string): SQL =>
    and(eq(issuanceSessions.tenantId, tenantId), eq(issuanceSessions.id, id)) as SQL
  const now = () => new Date()

  return {
    async insert(row: NewIssuanceSession, tx: Executor = db): Promise<IssuanceSessionRow> {
      if (tx === db) {
        const values = insertValues(issuanceSessions, INSERT_COLUMNS, {
          ...row,
          tenantId,
          byReference: row.byReference ?? false,
        })
        const [inserted] = await preparedInsert(
          db,
          'issuance_insert',
          issuanceSessions,
          INSERT_COLUMNS,
        ).execute(values)
        return inserted as IssuanceSessionRow
      }
      const [inserted] = await tx
        .insert(issuanceSessions)
        .values({ ...row, tenantId })
        .returning()
      return inserted as IssuanceSessionRow
    },

    async get(id: string): Promise<IssuanceSessionRow | undefined> {
      const [row] = await statements.get(db).execute({ tenantId, id })
      return row
    },

    async byCodeHash(codeHash: string): Promise<IssuanceSessionRow | undefined> {
      const [row] = await statements.byCodeHash(db).execute({ tenantId, codeHash })
      return row
    },

    /** Marks a by-reference offer fetched; answers the row only while it is still open. */
    async fetchOffer(id: string, at: Date): Promise<IssuanceSessionRow | undefined> {
      const [row] = await statements.fetchOffer(db).execute({ tenantId, id, at: at.toISOString() })
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
          claims: sql`case when ${issuanceSessions.txCodeAttempts} + 1 >= ${limit} then '{}'::jsonb else ${issuanceSessions.claims} end`,
          offerCodeEncrypted: sql`case when ${issuanceSessions.txCodeAttempts} + 1 >= ${limit} then null else ${issuanceSessions.offerCodeEncrypted} end`,
          updatedAt: now(),
        })
        .where(and(byId(id), eq(issuanceSessions.status, 'offered')))
        .returning()
      return row
    },

    /**
     * Redeems an open offer by its code in one statement when no transaction code is needed or the
     * given one is right; undefined otherwise (the caller then finds out why).
     */
    async redeemByCode(codeHash: string, txCodeHash: string | null, at: Date) {
      const [row] = await statements
        .redeemByCode(db)
        .execute({ tenantId, codeHash, txCodeHash, at: at.toISOString() })
      return row as IssuanceSessionRow | undefined
    },

    /** Redeems the pre-authorized code: only one request moves `offered` to `token_issued`. */
    async redeem(id: string, at: Date): Promise<IssuanceSessionRow | undefined> {
      const [row] = await statements.redeem(db).execute({ tenantId, id, at: at.toISOString() })
      return row
    },

    /**
     * Fails the session with a reason shown to the integrator (never claim values), and drops the
     * claims and the offer code, which a failed session never uses.
     */
    async fail(id: string, reason: string): Promise<void> {
      await db
        .update(issuanceSessions)
        .set({
          status: 'failed',
          failureReason: reason,
          claims: {},
          offerCodeEncrypted: null,
          updatedAt: now(),
        })
        .where(byId(id))
    },

    /**
     * Records an issued configuration (`completed` once every offered configuration was issued)
     * and the credential's notification id, in one statement.
     */
    async recordIssued(id: string, configurationId: string, notificationId: string, at: Date): Promise<void> {
      await statements
        .recordIssued(db)
        .execute({ tenantId, id, configurationId, notificationId, at: at.toISOString() })
    },
  }
}
export type IssuanceSessionRepository = ReturnType<typeof createIssuanceSessionRepository>

/** c_nonce values of one tenant. */
export function createNonceRepository(db: Database, tenantId: string) {
  return {
    async issue(value: string, expiresAt: Date): Promise<void> {
      await statements.issueNonce(db).execute({ tenantId, value, at: expiresAt.toISOString() })
    },

    /** Consumes a nonce atomically: true for the one caller that finds it unexpired. */
    async consume(value: string, at: Date): Promise<boolean> {
      const rows = await statements.consumeNonce(db).execute({ tenantId, value, at: at.toISOString() })
      return rows.length === 1
    },
  }
}

/**
 * Deletes up to `limit` nonces of any tenant that expired before `before`; returns how many. The
 * nonce endpoint is open to anyone, so unredeemed nonces must not pile up (index nonces_expiry).
 */
export async function purgeExpiredNonces(db: Database, before: Date, limit = 1000): Promise<number> {
  const expired = db
    .select({ tenantId: nonces.tenantId, value: nonces.value })
    .from(nonces)
    .where(lt(nonces.expiresAt, before))
    .limit(limit)
  const deleted = await db
    .delete(nonces)
    .where(sql`(${nonces.tenantId}, ${nonces.value}) in ${expired}`)
    .returning({ value: nonces.value })
  return deleted.length
}

/** Notification ids of one tenant's issuance sessions (OpenID4VCI §11). */
export function createNotificationRepository(db: Database, tenantId: string) {
  const byId = (id: string): SQL =>
    and(eq(issuanceNotifications.tenantId, tenantId), eq(issuanceNotifications.id, id)) as SQL
  return {
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
