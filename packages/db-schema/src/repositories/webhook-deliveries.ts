import type { Page, WebhookDelivery, WebhookDeliveryListQuery } from '@credential-service/core-domain'
import { and, asc, desc, eq, inArray, isNotNull, lt, lte, ne, or, type SQL, sql } from 'drizzle-orm'
import type { Database, Executor } from '../database'
import {
  issuanceNotifications,
  presentationSessions,
  type WebhookDeliveryRow,
  webhookDeliveries,
  webhookEndpoints,
} from '../schema'
import { afterKey, decodeKeyCursor, keyCursorText, toKeyPage } from './pagination'
import { rowsOf } from './rows'

const t = webhookDeliveries
/** A delivery whose body is still kept (sealed, or a step body in clear): it can be sent again. */
const keptBody = or(isNotNull(t.payloadEncrypted), isNotNull(t.payloadClear))

export function toWebhookDelivery(row: WebhookDeliveryRow): WebhookDelivery {
  const open = row.status === 'pending' || row.status === 'delivering'
  return {
    id: row.id,
    webhookEndpointId: row.endpointId,
    eventType: row.eventType,
    sessionId: row.sessionId,
    status: row.status as WebhookDelivery['status'],
    attempts: row.attempts,
    nextAttemptAt: open ? row.nextAttemptAt.toISOString() : null,
    lastError: row.lastError,
    replayable: row.payloadEncrypted !== null || row.payloadClear !== null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
  }
}

export interface NewWebhookDelivery {
  tenantId: string
  id: string
  endpointId: string
  eventType: string
  sessionId: string
  notificationId?: string | undefined
  dropSessionResult?: boolean | undefined
  payloadEncrypted: string
  at: Date
  /** The storing request's W3C `traceparent`; undefined when tracing is off. */
  traceparent?: string | undefined
  /** Events sent once per key and endpoint: a row with this key stored before makes this a no-op. */
  dedupeKey?: string | undefined
}

/**
 * The `insert ... select` of `deliveries` (of tenant `tenantId`), for a statement of the caller's:
 * a row for each whose endpoint exists and subscribes to its type (`events` null: every type)
 * and whose `dedupeKey` the endpoint has not stored yet. With `gate` (the name of a CTE of the
 * same statement), only when that CTE has a row: the events of a change, stored by the statement
 * that makes it. Returns the ids stored.
 */
export function deliveriesInsert(tenantId: string, deliveries: NewWebhookDelivery[], gate?: string): SQL {
  const e = webhookEndpoints
  const rows = sql.join(
    deliveries.map(
      (d) => sql`(${d.id}::text, ${d.endpointId}::text, ${d.eventType}::text, ${d.sessionId}::text,
        ${d.notificationId ?? null}::text, ${d.dropSessionResult ?? false}::boolean, ${d.payloadEncrypted}::text,
        ${d.at.toISOString()}::timestamptz, ${d.traceparent ?? null}::text, ${d.dedupeKey ?? null}::text)`,
    ),
    sql`, `,
  )
  return sql`
    insert into ${t} (tenant_id, id, endpoint_id, event_type, session_id, notification_id,
      drop_session_result, payload_encrypted, status, attempts, next_attempt_at, created_at, updated_at,
      traceparent, dedupe_key)
    select ${e.tenantId}, v.id, ${e.id}, v.event_type, v.session_id, v.notification_id, v.drop_session_result,
      v.payload_encrypted, 'pending', 0, v.next_attempt_at, now(), now(), v.traceparent, v.dedupe_key
    from (values ${rows}) as v(id, endpoint_id, event_type, session_id, notification_id, drop_session_result,
      payload_encrypted, next_attempt_at, traceparent, dedupe_key)
    join ${e} on ${e.tenantId} = ${tenantId} and ${e.id} = v.endpoint_id
    where (${e.events} is null or v.event_type = any(${e.events}))
      ${gate ? sql`and exists (select 1 from ${sql.identifier(gate)})` : sql``}
    on conflict (tenant_id, endpoint_id, dedupe_key) do nothing
    returning ${t.id}`
}

/**
 * Stores an event for an endpoint, in the caller's transaction, when the endpoint exists and
 * subscribes to the event type, and no row of the same `dedupeKey` was stored for it
 * (`deliveriesInsert`, one statement). Returns whether a row was stored.
 */
export async function enqueueWebhookDelivery(tx: Executor, input: NewWebhookDelivery): Promise<boolean> {
  return rowsOf(await tx.execute(deliveriesInsert(input.tenantId, [input]))).length > 0
}

/**
 * Claims up to `limit` due deliveries of any tenant: pending ones whose time has come and
 * delivering ones whose lease ran out (their pod died). `FOR UPDATE SKIP LOCKED` hands each row
 * to one caller however many drain at once; the claim counts the attempt and leases the row until
 * `leaseUntil`, so no other drainer takes it while this one delivers.
 */
export function claimDueWebhookDeliveries(
  db: Executor,
  options: { now: Date; leaseUntil: Date; limit: number; ids?: string[] },
): Promise<WebhookDeliveryRow[]> {
  const due = db
    .select({ tenantId: t.tenantId, id: t.id })
    .from(t)
    .where(
      and(
        inArray(t.status, ['pending', 'delivering']),
        lte(t.nextAttemptAt, options.now),
        options.ids ? inArray(t.id, options.ids) : undefined,
      ),
    )
    .orderBy(asc(t.nextAttemptAt))
    .limit(options.limit)
    .for('update', { skipLocked: true })
  return db
    .update(t)
    .set({
      status: 'delivering',
      attempts: sql`${t.attempts} + 1`,
      nextAttemptAt: options.leaseUntil,
      updatedAt: options.now,
    })
    .where(sql`(${t.tenantId}, ${t.id}) in ${due}`)
    .returning()
}

export type DeliveryResult =
  | { status: 'delivered'; at: Date }
  | { status: 'pending'; at: Date; error: string; nextAttemptAt: Date }
  | { status: 'failed'; at: Date; error: string }

/**
 * Records the outcome of the attempt `claimed` made, unless the row was claimed again since (the
 * lease ran out): the attempt count fences late writers. Mirrors the outcome onto the notification
 * or presentation session the event reports, in the same transaction; a delivered presentation
 * result of a `drop-after-delivery` tenant leaves the session and the outbox.
 */
export async function finishWebhookDelivery(
  db: Database,
  claimed: WebhookDeliveryRow,
  result: DeliveryResult,
): Promise<boolean> {
  const error = result.status === 'delivered' ? null : result.error
  const dropBody = result.status === 'delivered' && claimed.dropSessionResult
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(t)
      .set({
        status: result.status,
        lastError: error,
        nextAttemptAt: result.status === 'pending' ? result.nextAttemptAt : result.at,
        deliveredAt: result.status === 'delivered' ? result.at : null,
        updatedAt: result.at,
        ...(dropBody ? { payloadEncrypted: null } : {}),
      })
      .where(
        and(
          eq(t.tenantId, claimed.tenantId),
          eq(t.id, claimed.id),
          eq(t.status, 'delivering'),
          eq(t.attempts, claimed.attempts),
        ),
      )
      .returning({ id: t.id })
    if (!row) return false
    const delivery = {
      deliveryStatus: result.status,
      deliveryAttempts: claimed.attempts,
      deliveryError: error,
    }
    if (claimed.notificationId) {
      const n = issuanceNotifications
      await tx
        .update(n)
        .set(delivery)
        .where(and(eq(n.tenantId, claimed.tenantId), eq(n.id, claimed.notificationId)))
    } else if (claimed.eventType === 'presentation.result') {
      const p = presentationSessions
      await tx
        .update(p)
        .set({
          ...delivery,
          ...(dropBody ? { resultEncrypted: null, legacyResult: null } : {}),
          updatedAt: result.at,
        })
        .where(and(eq(p.tenantId, claimed.tenantId), eq(p.id, claimed.sessionId)))
    }
    return true
  })
}

/**
 * Deletes up to `limit` finished deliveries (delivered or failed) of any tenant last changed
 * before `before`; returns how many.
 */
export async function purgeWebhookDeliveries(db: Database, before: Date, limit = 500): Promise<number> {
  const done = db
    .select({ tenantId: t.tenantId, id: t.id })
    .from(t)
    .where(and(inArray(t.status, ['delivered', 'failed']), lt(t.updatedAt, before)))
    .limit(limit)
  const deleted = await db.delete(t).where(sql`(${t.tenantId}, ${t.id}) in ${done}`).returning({ id: t.id })
  return deleted.length
}

/** Deliveries waiting (pending or being attempted) and given up, across tenants, for metrics. */
export async function countWebhookBacklog(db: Database): Promise<{ pending: number; failed: number }> {
  const [row] = await db
    .select({
      pending: sql<number>`count(*) filter (where ${t.status} in ('pending', 'delivering'))::int`,
      failed: sql<number>`count(*) filter (where ${t.status} = 'failed')::int`,
    })
    .from(t)
  return { pending: Number(row?.pending ?? 0), failed: Number(row?.failed ?? 0) }
}

/** The deliveries of one tenant's webhook endpoints; another tenant's read as not found. */
export function createWebhookDeliveryRepository(db: Database, tenantId: string) {
  const ofEndpoint = (endpointId: string) => and(eq(t.tenantId, tenantId), eq(t.endpointId, endpointId))
  const byId = (endpointId: string, id: string) => and(ofEndpoint(endpointId), eq(t.id, id)) as SQL
  return {
    /** Newest first, optionally of one status. */
    async list(endpointId: string, query: WebhookDeliveryListQuery): Promise<Page<WebhookDelivery>> {
      const after = decodeKeyCursor(query.cursor)
      const rows = await db
        .select({ row: t, at: keyCursorText(t.createdAt) })
        .from(t)
        .where(
          and(
            ofEndpoint(endpointId),
            query.status ? eq(t.status, query.status) : undefined,
            after ? afterKey(t.createdAt, t.id, after) : undefined,
          ),
        )
        .orderBy(desc(t.createdAt), desc(sql`${t.id} collate "C"`))
        .limit(query.limit + 1)
      return toKeyPage(
        rows.map(({ row, at }) => ({ item: toWebhookDelivery(row), key: { at, id: row.id } })),
        query.limit,
      )
    },

    async get(endpointId: string, id: string): Promise<WebhookDeliveryRow | undefined> {
      const [row] = await db.select().from(t).where(byId(endpointId, id))
      return row
    },

    /**
     * Queues a delivery again, due now, with a fresh count of attempts: any status but
     * `delivering` (an attempt under way), and only while the body is kept. Undefined otherwise.
     */
    async replay(
      endpointId: string,
      id: string,
      now: Date,
      tx: Executor = db,
    ): Promise<WebhookDeliveryRow | undefined> {
      const [row] = await tx
        .update(t)
        .set({ status: 'pending', attempts: 0, nextAttemptAt: now, updatedAt: now, deliveredAt: null })
        .where(and(byId(endpointId, id), ne(t.status, 'delivering'), keptBody))
        .returning()
      return row
    },

    /** Queues every failed delivery of the endpoint again; returns how many. */
    async replayFailed(endpointId: string, now: Date, tx: Executor = db): Promise<number> {
      const rows = await tx
        .update(t)
        .set({ status: 'pending', attempts: 0, nextAttemptAt: now, updatedAt: now })
        .where(and(ofEndpoint(endpointId), eq(t.status, 'failed'), keptBody))
        .returning({ id: t.id })
      return rows.length
    },
  }
}
export type WebhookDeliveryRepository = ReturnType<typeof createWebhookDeliveryRepository>
