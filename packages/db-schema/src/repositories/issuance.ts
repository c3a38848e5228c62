import { and, eq, getTableColumns, gt, inArray, isNotNull, isNull, type SQL, sql } from 'drizzle-orm'
import type { QueryBuilder } from 'drizzle-orm/pg-core'
import type { Database, Executor } from '../database'
import {
  type IssuanceSessionRow,
  issuanceNotifications,
  issuanceSessions,
  nonces,
  webhookDeliveries,
  webhookEndpoints,
} from '../schema'
import { insertValues, param, prepared, preparedInsert } from './prepared'
import type { NewWebhookDelivery } from './webhook-deliveries'

const INSERT_COLUMNS = [
  'tenantId',
  'id',
  'status',
  'credentialConfigurationIds',
  'claimsEncrypted',
  'preAuthorizedCodeHash',
  'txCodeHash',
  'txCodeSpec',
  'issuerStateHash',
  'byReference',
  'offerCodeEncrypted',
  'createdByClientId',
  'statusHandle',
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
const openByCode = and(
  eq(issuanceSessions.tenantId, tenant),
  eq(issuanceSessions.preAuthorizedCodeHash, param('codeHash')),
  eq(issuanceSessions.status, 'offered'),
  gt(issuanceSessions.expiresAt, at),
)
/** The failure reason of a session whose transaction code was guessed wrong too often. */
const TX_CODE_LOCKED = 'too many wrong transaction codes'

/**
 * Claims an issued configuration: only a session that is still issuing and has not issued it yet
 * matches, and the row lock makes one of two concurrent requests the only winner.
 */
function claimIssued(d: Database) {
  const configurationId = param('configurationId')
  const asArray = sql`array[${configurationId}]::text[]`
  const completes = sql`${issuanceSessions.credentialConfigurationIds} <@ (${issuanceSessions.issuedConfigurationIds} || ${asArray})`
  return d.$with('claimed').as(
    d
      .update(issuanceSessions)
      .set({
        issuedConfigurationIds: sql`${issuanceSessions.issuedConfigurationIds} || ${asArray}`,
        status: sql`case when ${completes} then 'completed' else 'credential_issued' end`,
        // Data minimisation: once every credential is out, the offer's claims serve nothing.
        claimsEncrypted: sql`case when ${completes} then null else ${issuanceSessions.claimsEncrypted} end`,
        legacyClaims: sql`case when ${completes} then null else ${issuanceSessions.legacyClaims} end`,
        credentialIssuedAt: at,
        updatedAt: sql`now()`,
      })
      .where(
        and(
          sessionById,
          inArray(issuanceSessions.status, ['token_issued', 'credential_issued']),
          sql`not (${issuanceSessions.issuedConfigurationIds} @> ${asArray})`,
        ),
      )
      .returning({ sessionId: issuanceSessions.id }),
  )
}

/**
 * The notification id (OpenID4VCI §11) of a claim, recorded in the claim's statement. insert …
 * select names every column in table order (drizzle checks it), defaults included.
 */
const notificationOf = (claimed: ReturnType<typeof claimIssued>) => (qb: QueryBuilder) =>
  qb
    .select({
      tenantId: sql<string>`${tenant}`.as('tenant_id'),
      id: sql<string>`${param('notificationId')}`.as('id'),
      sessionId: sql<string>`${claimed.sessionId}`.as('session_id'),
      credentialConfigurationId: sql<string>`${param('configurationId')}`.as('credential_configuration_id'),
      event: sql<null>`null`.as('event'),
      eventDescription: sql<null>`null`.as('event_description'),
      receivedAt: sql<null>`null`.as('received_at'),
      deliveryStatus: sql<string>`'none'`.as('delivery_status'),
      deliveryAttempts: sql<number>`0`.as('delivery_attempts'),
      deliveryError: sql<null>`null`.as('delivery_error'),
      createdAt: sql<Date>`now()`.as('created_at'),
    })
    .from(claimed)

// The statements of every issuance flow, prepared once per database.
const statements = {
  get: (db: Database) =>
    prepared(db, 'issuance_get', (d) => d.select().from(issuanceSessions).where(sessionById)),
  // A data-modifying CTE runs whether or not the session is found: the nonce is spent either way.
  getSpendingNonce: (db: Database) =>
    prepared(db, 'issuance_get_spending_nonce', (d) => {
      // A nonce is recorded as spent until it expires; a second spend conflicts and returns nothing.
      const spent = d.$with('spent').as(
        d
          .insert(nonces)
          .values({ tenantId: tenant, value: param('nonce'), expiresAt: param('expiresAt') })
          .onConflictDoNothing()
          .returning({ value: nonces.value }),
      )
      return d
        .with(spent)
        .select({
          ...getTableColumns(issuanceSessions),
          nonceSpent: sql<boolean>`exists (select 1 from ${spent})`.as('nonce_spent'),
        })
        .from(issuanceSessions)
        .where(sessionById)
    }),
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
  redeemByCode: (db: Database) =>
    prepared(db, 'issuance_redeem_by_code', (d) =>
      d
        .update(issuanceSessions)
        .set({ status: 'token_issued', tokenIssuedAt: at, updatedAt: sql`now()` })
        .where(
          and(
            openByCode,
            isNull(issuanceSessions.txCodeHash),
            // Configurations this request may not redeem (a JSON array): the code stays unspent.
            sql`not (${issuanceSessions.credentialConfigurationIds} && array(select jsonb_array_elements_text(${param('excluded')}::jsonb)))`,
          ),
        )
        .returning(),
    ),
  redeemWithTxCode: (db: Database) =>
    prepared(db, 'issuance_redeem_with_tx_code', (d) => {
      const attempts = issuanceSessions.txCodeAttempts
      const right = sql`${issuanceSessions.txCodeHash} = ${param('txCodeHash')}::text`
      const exhausted = sql`${attempts} + 1 >= ${param('limit')}::integer`
      // The attempt is counted in the statement that judges it: the row lock orders concurrent
      // guesses, and each one sees the count the previous one left (OpenID4VCI 1.0 §13.6.3).
      return d
        .update(issuanceSessions)
        .set({
          txCodeAttempts: sql`${attempts} + 1`,
          status: sql`case when ${right} then 'token_issued' when ${exhausted} then 'failed' else ${issuanceSessions.status} end`,
          tokenIssuedAt: sql`case when ${right} then ${at}::timestamptz else ${issuanceSessions.tokenIssuedAt} end`,
          failureReason: sql`case when ${right} then ${issuanceSessions.failureReason} when ${exhausted} then ${TX_CODE_LOCKED} else ${issuanceSessions.failureReason} end`,
          // A locked offer never issues: its claims and offer code go with the lock.
          claimsEncrypted: sql`case when not (${right}) and ${exhausted} then null else ${issuanceSessions.claimsEncrypted} end`,
          legacyClaims: sql`case when not (${right}) and ${exhausted} then null else ${issuanceSessions.legacyClaims} end`,
          offerCodeEncrypted: sql`case when not (${right}) and ${exhausted} then null else ${issuanceSessions.offerCodeEncrypted} end`,
          updatedAt: sql`now()`,
        })
        .where(
          and(
            openByCode,
            isNotNull(issuanceSessions.txCodeHash),
            sql`${attempts} < ${param('limit')}::integer`,
          ),
        )
        .returning()
    }),
  recordIssued: (db: Database) =>
    prepared(db, 'issuance_record_issued', (d) => {
      const claimed = claimIssued(d)
      return d.with(claimed).insert(issuanceNotifications).select(notificationOf(claimed)).returning({
        id: issuanceNotifications.id,
      })
    }),
  // The same, and the outbox row of its `credential.issued` event when the endpoint subscribes
  // (webhook-deliveries.ts `enqueueWebhookDelivery`): the event costs the hot path no statement.
  recordIssuedWithEvent: (db: Database) =>
    prepared(db, 'issuance_record_issued_event', (d) => {
      const claimed = claimIssued(d)
      const notified = d
        .$with('notified')
        .as(
          d
            .insert(issuanceNotifications)
            .select(notificationOf(claimed))
            .returning({ id: issuanceNotifications.id }),
        )
      const e = webhookEndpoints
      const eventType = param('eventType')
      const queued = d.$with('queued').as(
        d
          .insert(webhookDeliveries)
          .select(
            // d, not the callback's query builder: that one has no snake_case casing for columns.
            d
              .select({
                tenantId: e.tenantId,
                id: sql<string>`${param('deliveryId')}`.as('id'),
                endpointId: e.id,
                eventType: sql<string>`${eventType}`.as('event_type'),
                sessionId: sql<string>`${id}`.as('session_id'),
                notificationId: sql<null>`null`.as('notification_id'),
                dropSessionResult: sql<boolean>`false`.as('drop_session_result'),
                payloadEncrypted: sql<string>`${param('payloadEncrypted')}`.as('payload_encrypted'),
                payloadClear: sql<null>`null`.as('payload_clear'),
                status: sql<string>`'pending'`.as('status'),
                attempts: sql<number>`0`.as('attempts'),
                nextAttemptAt: sql<Date>`${at}::timestamptz`.as('next_attempt_at'),
                lastError: sql<null>`null`.as('last_error'),
                createdAt: sql<Date>`now()`.as('created_at'),
                updatedAt: sql<Date>`now()`.as('updated_at'),
                deliveredAt: sql<null>`null`.as('delivered_at'),
                traceparent: sql<string | null>`${param('traceparent')}::text`.as('traceparent'),
                dedupeKey: sql<null>`null`.as('dedupe_key'),
              })
              .from(e)
              .where(
                and(
                  eq(e.tenantId, tenant),
                  eq(e.id, param('endpointId')),
                  sql`(${e.events} is null or ${eventType}::text = any(${e.events}))`,
                  sql`exists (select 1 from ${notified})`,
                ),
              ),
          )
          .returning({ id: webhookDeliveries.id }),
      )
      return d
        .with(claimed, notified, queued)
        .select({ id: notified.id, queued: sql<boolean>`exists (select 1 from ${queued})`.as('queued') })
        .from(notified)
    }),
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

    /**
     * The credential endpoint's one read: the session, and the proofs' c_nonce recorded as spent in
     * the same statement (single use across processes: the second record of a nonce conflicts). The
     * caller has checked that the issuer made the nonce and that it lives (a stateless c_nonce,
     * apps/issuer `c-nonces.ts`); `nonce` undefined when it did not pass, then only the session is
     * read. The nonce is spent even when the session is gone or inactive; `nonceSpent` is false when
     * it was spent before.
     */
    async getSpendingNonce(
      id: string,
      nonce: { value: string; expiresAt: Date } | undefined,
    ): Promise<{ session: IssuanceSessionRow | undefined; nonceSpent: boolean }> {
      if (!nonce) {
        const [session] = await statements.get(db).execute({ tenantId, id })
        return { session, nonceSpent: false }
      }
      const rows = await statements
        .getSpendingNonce(db)
        .execute({ tenantId, id, nonce: nonce.value, expiresAt: nonce.expiresAt.toISOString() })
      // No session row carries the flag; the caller refuses the token before looking at it.
      if (rows.length === 0) return { session: undefined, nonceSpent: false }
      const { nonceSpent, ...session } = rows[0] as IssuanceSessionRow & { nonceSpent: boolean }
      return { session, nonceSpent }
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

    /**
     * Redeems an open offer that needs no transaction code, in one statement (the hot path);
     * undefined when the code is unknown, used, expired, the offer needs a transaction code, or it
     * offers one of `excludedConfigurationIds` (the caller then reads why, the code unspent).
     */
    async redeemByCode(
      codeHash: string,
      at: Date,
      excludedConfigurationIds: string[] = [],
    ): Promise<IssuanceSessionRow | undefined> {
      const [row] = await statements.redeemByCode(db).execute({
        tenantId,
        codeHash,
        at: at.toISOString(),
        excluded: JSON.stringify(excludedConfigurationIds),
      })
      return row
    },

    /**
     * One guess at the transaction code of an open offer, counted and judged in one statement:
     * the attempt counter goes up first, a right guess under `limit` attempts redeems the offer
     * (`status` `token_issued`), and the guess that reaches `limit` fails the session (`failed`),
     * after which no guess, right or wrong, matches again. Undefined when the offer is not open,
     * needs no transaction code, or is locked; otherwise the row after the guess.
     */
    async redeemWithTxCode(
      codeHash: string,
      txCodeHash: string,
      limit: number,
      at: Date,
    ): Promise<IssuanceSessionRow | undefined> {
      const [row] = await statements
        .redeemWithTxCode(db)
        .execute({ tenantId, codeHash, txCodeHash, limit, at: at.toISOString() })
      return row
    },

    /**
     * Fails the session with a reason shown to the integrator (never claim values), and drops the
     * claims and the offer code, which a failed session never uses. With `from`, only a session in
     * one of those statuses fails (a completed one keeps its record).
     */
    async fail(id: string, reason: string, from?: string[]): Promise<void> {
      await db
        .update(issuanceSessions)
        .set({
          status: 'failed',
          failureReason: reason,
          claimsEncrypted: null,
          legacyClaims: null,
          offerCodeEncrypted: null,
          updatedAt: now(),
        })
        .where(from ? and(byId(id), inArray(issuanceSessions.status, from)) : byId(id))
    },

    /**
     * Records an issued configuration (`completed` once every offered configuration was issued)
     * and the credential's notification id, in one statement; with `event` (sealed by the webhook
     * outbox), its outbox row too, when the endpoint subscribes to its type. Undefined when the
     * session no longer issues (failed) or already issued this configuration: of two concurrent
     * requests for the same configuration, exactly one records it. `queued`: the event was stored.
     */
    async recordIssued(
      id: string,
      configurationId: string,
      notificationId: string,
      at: Date,
      event?: NewWebhookDelivery,
    ): Promise<{ queued: boolean } | undefined> {
      const values = { tenantId, id, configurationId, notificationId, at: at.toISOString() }
      if (!event) {
        const rows = await statements.recordIssued(db).execute(values)
        return rows.length === 1 ? { queued: false } : undefined
      }
      const rows = await statements.recordIssuedWithEvent(db).execute({
        ...values,
        endpointId: event.endpointId,
        eventType: event.eventType,
        deliveryId: event.id,
        payloadEncrypted: event.payloadEncrypted,
        traceparent: event.traceparent ?? null,
      })
      return rows[0] ? { queued: Boolean(rows[0].queued) } : undefined
    },
  }
}
export type IssuanceSessionRepository = ReturnType<typeof createIssuanceSessionRepository>
