import { ACCESS_TOKEN_SECONDS, newId, zPresentationStatusEvent } from '@credential-service/core-domain'
import { contextOf, currentTraceparent, inSpan, tracingOn } from '@credential-service/core-domain/tracing'
import type { JwkCipher } from '@credential-service/crypto'
import {
  claimDueWebhookDeliveries,
  createWebhookEndpointRepository,
  type Database,
  type DeliveryResult,
  type Executor,
  enqueueWebhookDelivery,
  finishWebhookDelivery,
  type NewWebhookDelivery,
  type WebhookDeliveryRow,
} from '@credential-service/db-schema'
import type { FastifyInstance } from 'fastify'
import { sweepExpiredSessions } from './expiry-sweep'
import type { FlowMetrics } from './metrics'
import { createOutageLog, type OutageLogger } from './outage-log'
import type { OutboundPolicy } from './outbound-fetch'
import { retryWhileUnavailable } from './retry-while-unavailable'
import { scheduleJob } from './runtime-policies'
import { type OutboundLog, sendWebhook } from './webhook-delivery'
import type { WebhookEvent } from './webhook-event'

/** How long a claimed row is someone's: well above one attempt's 5 s limit. */
export const DELIVERY_LEASE_MS = 60_000
const BATCH = 20
const SEEN_LIMIT = 10_000
const MAX_BACKOFF_MS = 60 * 60 * 1000

export interface WebhookOutboxOptions {
  db: Database
  cipher: JwkCipher
  outbound: OutboundPolicy
  /** Attempts per delivery (WEBHOOK_MAX_ATTEMPTS). */
  attempts: number
  /** Delay before the first retry, doubled each time (WEBHOOK_BACKOFF_MS). */
  backoffMs: number
  /** How often a process that drains looks for due rows (WEBHOOK_POLL_SECONDS). */
  pollSeconds: number
  /** Failed attempts and drains; the logger of the app it first runs in when absent. */
  log?: OutboxLog
  /** Counts each attempt's outcome (webhook_deliveries_total) and the attempts in flight. */
  metrics?: Pick<FlowMetrics, 'webhookDelivery'>
  now: () => Date
  leaseMs?: number
}

type OutboxLog = OutboundLog & OutageLogger

export type { WebhookEvent }

/**
 * A body stored in clear (webhook_deliveries.payload_clear): sent only if it is what the request
 * fetch stores, a `request_retrieved` step of this row's tenant, session and id. No other body is
 * ever sent unsealed, whatever a row says.
 */
function clearStepBody(row: WebhookDeliveryRow): string | undefined {
  try {
    const body = zPresentationStatusEvent.parse(JSON.parse(row.payloadClear as string))
    const matches =
      row.eventType === body.type &&
      body.status === 'request_retrieved' &&
      body.tenantId === row.tenantId &&
      body.sessionId === row.sessionId &&
      body.deliveryId === row.id
    return matches ? (row.payloadClear as string) : undefined
  } catch {
    return undefined
  }
}

const payloadContext = (tenantId: string, id: string) => `webhook-delivery:${tenantId}/${id}`

/**
 * The durable webhook outbox. Events are stored in the transaction of the change they report
 * (`enqueue`), then delivered by whichever process drains first: `kick` right after the commit,
 * the poll of `runIn` (issuer and verifier processes), and a timer at each retry's due time.
 * Delivery is at least once: a process that dies mid-attempt loses its lease and the row is tried
 * again; the receiver tells repeats apart by `deliveryId`.
 */
export function createWebhookOutbox(options: WebhookOutboxOptions) {
  const leaseMs = options.leaseMs ?? DELIVERY_LEASE_MS
  let closed = false
  let scheduled = false
  let running: Promise<void> | undefined
  let again = false
  /** Kicks of one change's deliveries, awaited on close like a run. */
  const targeted = new Set<Promise<void>>()
  /** Keys of once-only events this process stored or saw stored (oldest dropped first). */
  const seen = new Set<string>()
  const timers = new Set<NodeJS.Timeout>()
  let log = options.log
  // A database outage is one warn line per outage, not an error per drain and row.
  const outage = createOutageLog('webhook outbox')

  /**
   * The outbox row of an event, its body sealed (encrypted under its new delivery id), for a
   * statement of the caller's that stores it with the change it reports (`enqueue` is that
   * statement alone). Kick the id once it committed and was stored.
   */
  function seal(event: WebhookEvent): NewWebhookDelivery {
    const id = newId('whd')
    const body = JSON.stringify({ ...event.body, deliveryId: id })
    return {
      tenantId: event.tenantId,
      id,
      endpointId: event.endpointId,
      eventType: event.type,
      sessionId: event.sessionId,
      notificationId: event.notificationId,
      dropSessionResult: event.dropSessionResult,
      payloadEncrypted: options.cipher.encrypt(body, payloadContext(event.tenantId, id)),
      at: options.now(),
      // Whichever process delivers it later continues the trace of the change it reports.
      traceparent: currentTraceparent(),
      dedupeKey: event.dedupeKey,
    }
  }

  /** Stores the event when the endpoint subscribes to its type; returns the delivery id if stored. */
  async function enqueue(tx: Executor, event: WebhookEvent): Promise<string | undefined> {
    const delivery = seal(event)
    return (await enqueueWebhookDelivery(tx, delivery)) ? delivery.id : undefined
  }

  /**
   * Stores an event that is sent once per endpoint and `dedupeKey` (a step of a session), outside
   * any transaction, and kicks it. The database refuses a repeat from any process; this process
   * also remembers the keys it stored or saw refused, so a flood of repeats (a wallet retrying a
   * bad request) costs no statement each.
   */
  async function enqueueOnce(event: WebhookEvent & { dedupeKey: string }): Promise<void> {
    const key = `${event.tenantId}/${event.endpointId}/${event.dedupeKey}`
    if (seen.has(key)) return
    const id = await enqueue(options.db, event)
    seen.add(key)
    if (seen.size > SEEN_LIMIT) seen.delete(seen.values().next().value as string)
    if (id) void kick([id])
  }

  /**
   * Drains every due row, in batches, in the background; a kick during a run makes the run look
   * once more. Resolves when the run ends; never rejects (failures are logged). With `ids` (the
   * deliveries a change just stored) only those rows are claimed: the rows of other changes are
   * left to their own kicks, the poll and the retry timers.
   */
  function kick(ids?: string[]): Promise<void> {
    if (closed) return Promise.resolve()
    if (ids) {
      const drained = drainBatch(ids).then(
        () => undefined,
        (error: unknown) => outage.failed(log, error, 'webhook outbox drain failed'),
      )
      targeted.add(drained)
      void drained.finally(() => targeted.delete(drained))
      return drained
    }
    if (running) {
      again = true
      return running
    }
    running = (async () => {
      try {
        do {
          again = false
          while ((await drainBatch()) === BATCH && !closed) {}
        } while (again && !closed)
      } catch (error) {
        outage.failed(log, error, 'webhook outbox drain failed')
      } finally {
        running = undefined
      }
    })()
    return running
  }

  async function drainBatch(ids?: string[]): Promise<number> {
    const now = options.now()
    const rows = await claimDueWebhookDeliveries(options.db, {
      now,
      leaseUntil: new Date(now.getTime() + leaseMs),
      limit: BATCH,
      ...(ids ? { ids } : {}),
    })
    let recorded = true
    await Promise.all(
      rows.map((row) =>
        deliver(row).catch((error) => {
          recorded = false
          unrecorded(row, error)
        }),
      ),
    )
    if (recorded) outage.succeeded(log)
    return rows.length
  }

  // The row stays `delivering` and is tried again once its lease ends; the others go on.
  function unrecorded(row: WebhookDeliveryRow, error: unknown) {
    outage.failed(log, error, 'webhook delivery outcome not recorded', {
      tenantId: row.tenantId,
      webhookDeliveryId: row.id,
    })
  }

  function deliver(row: WebhookDeliveryRow): Promise<void> {
    if (!tracingOn()) return deliverOnce(row)
    // A span of the trace that stored the event (a child of the request's span), whichever
    // process and attempt it is; a row stored with tracing off starts a trace of its own.
    return inSpan('webhook deliver', () => deliverOnce(row), {
      kind: 'producer',
      ...(row.traceparent ? { parent: contextOf(row.traceparent) } : {}),
      attributes: () => ({
        'webhook.delivery_id': row.id,
        'webhook.endpoint_id': row.endpointId,
        'webhook.event_type': row.eventType,
        'webhook.attempt': row.attempts,
        'tenant.id': row.tenantId,
      }),
    })
  }

  async function deliverOnce(row: WebhookDeliveryRow): Promise<void> {
    const counted = options.metrics?.webhookDelivery(row.tenantId)
    const result = await attempt(row)
    counted?.(result.status === 'pending' ? 'retrying' : result.status)
    // Delivered, or given up; a retry's failure has its own warn line (webhook-delivery.ts).
    if (result.status !== 'pending')
      log?.info?.(
        {
          tenantId: row.tenantId,
          sessionId: row.sessionId,
          webhookEndpointId: row.endpointId,
          webhookDeliveryId: row.id,
          eventType: row.eventType,
          attempts: row.attempts,
        },
        result.status === 'delivered' ? 'webhook delivered' : 'webhook failed',
      )
    // A claimed row whose outcome is not recorded waits for its lease to end (a minute), and is
    // then sent again: a reset connection is waited out instead (the update is conditional).
    await retryWhileUnavailable(
      () => finishWebhookDelivery(options.db, row, result),
      () => closed,
    )
    if (result.status === 'pending') retryAt(result.nextAttemptAt.getTime() - result.at.getTime())
  }

  async function attempt(row: WebhookDeliveryRow): Promise<DeliveryResult> {
    // Past the last attempt: the process that made it stopped before recording the outcome.
    if (row.attempts > options.attempts)
      return {
        status: 'failed',
        at: options.now(),
        error: row.lastError ?? 'the last attempt was interrupted',
      }
    const endpoints = createWebhookEndpointRepository(options.db, row.tenantId)
    const endpoint = await retryWhileUnavailable(
      () => endpoints.row(row.endpointId),
      () => closed,
    )
    const body = endpoint ? openBody(row) : undefined
    const outcome =
      endpoint && body !== undefined
        ? await sendWebhook(endpoint, body, {
            cipher: options.cipher,
            outbound: options.outbound,
            attempt: row.attempts,
            deliveryId: row.id,
            ...(log ? { log } : {}),
          })
        : { ok: false as const, error: 'the event body is gone or does not decrypt with this MASTER_SECRET' }
    const at = options.now()
    if (outcome.ok) return { status: 'delivered', at }
    if (row.attempts >= options.attempts) return { status: 'failed', at, error: outcome.error }
    const delay = Math.min(options.backoffMs * 2 ** (row.attempts - 1), MAX_BACKOFF_MS)
    return { status: 'pending', at, error: outcome.error, nextAttemptAt: new Date(at.getTime() + delay) }
  }

  function openBody(row: WebhookDeliveryRow): string | undefined {
    if (row.payloadClear !== null) return clearStepBody(row)
    if (row.payloadEncrypted === null) return undefined
    try {
      return options.cipher.decrypt<string>(row.payloadEncrypted, payloadContext(row.tenantId, row.id))
    } catch {
      return undefined
    }
  }

  /** A retry due before the next poll gets its own timer, so backoff stays as configured. */
  function retryAt(delayMs: number) {
    if (closed || delayMs >= options.pollSeconds * 1000) return
    const timer = setTimeout(() => {
      timers.delete(timer)
      void kick()
    }, delayMs)
    timer.unref()
    timers.add(timer)
  }

  /** Reports sessions that expired unanswered, once across processes, and kicks their events. */
  async function sweep(): Promise<void> {
    if (closed) return
    const stored = await sweepExpiredSessions({
      db: options.db,
      seal,
      now: options.now,
      tokenSeconds: ACCESS_TOKEN_SECONDS,
    })
    if (stored.length > 0) void kick(stored)
  }

  /** Stops timers and kicks, and waits for a run in progress (its attempts are bounded). */
  async function close(): Promise<void> {
    closed = true
    for (const timer of timers) clearTimeout(timer)
    timers.clear()
    await Promise.all([running, ...targeted])
  }

  return {
    seal,
    enqueue,
    enqueueOnce,
    kick,
    sweep,
    close,
    /**
     * Drains in this app's process: at start (rows left by a restart), every `pollSeconds`, and
     * on kicks. Once per outbox, so an all-in-one process that hands one outbox to several apps
     * drains once; closing the app closes the outbox.
     */
    runIn(app: FastifyInstance) {
      if (scheduled) return
      scheduled = true
      log ??= app.log
      scheduleJob(app, 'webhook outbox', options.pollSeconds, kick)
      // Expired offers and requests are reported by the same processes, as often (expiry-sweep.ts).
      scheduleJob(app, 'expiry sweep', options.pollSeconds, sweep)
      app.addHook('onReady', async () => {
        void kick()
      })
      app.addHook('onClose', close)
    },
  }
}
export type WebhookOutbox = ReturnType<typeof createWebhookOutbox>
