import { sql } from 'drizzle-orm'
import {
  boolean,
  check,
  foreignKey,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core'
import { webhookEndpoints } from './configs'
import { tenants } from './tenants'

/**
 * The webhook outbox: one row per event for one endpoint, written in the transaction of the state
 * change it reports, then delivered by any pod (claimed with SKIP LOCKED). `pending` rows wait for
 * `next_attempt_at`; a `delivering` row is leased until `next_attempt_at`, after which another pod
 * may claim it (its pod died). The body is encrypted (MASTER_SECRET): presentation results carry
 * disclosed claims.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    id: text().notNull(),
    endpointId: text().notNull(),
    eventType: text().notNull(),
    /** The session the event is about. */
    sessionId: text().notNull(),
    /** `issuance.notification` events: the notification whose delivery fields mirror this row. */
    notificationId: text(),
    /** Drop the session's disclosed claims once delivered (tenant `drop-after-delivery`). */
    dropSessionResult: boolean().notNull().default(false),
    /** The JSON body, encrypted; null once dropped after delivery (tenant `drop-after-delivery`). */
    payloadEncrypted: text(),
    /**
     * The JSON body in clear, for the one event whose body the statement storing it builds: a
     * `presentation.status` `request_retrieved` (no claims, no outcome; the request fetch stores it
     * without knowing the session beforehand). The deliverer sends it only if it says that and
     * names this row's tenant, session and id. Null for every other event.
     */
    payloadClear: text(),
    status: text().notNull().default('pending'),
    attempts: integer().notNull().default(0),
    nextAttemptAt: timestamp({ withTimezone: true }).notNull(),
    lastError: text(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    deliveredAt: timestamp({ withTimezone: true }),
    /**
     * W3C `traceparent` of the request that stored the event, when tracing was on: each delivery
     * attempt is a span of that trace, and the webhook request carries it.
     */
    traceparent: text(),
    /**
     * Events sent once per session and step (`issuance.failed` per reason, `presentation.status`,
     * the expiry events): a second insert with the same key for the endpoint stores nothing, in
     * whichever process it runs. Null for events that are once per change anyway.
     */
    dedupeKey: text(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    // Deleting an endpoint deletes its delivery history (and what was still to send).
    foreignKey({
      name: 'webhook_deliveries_endpoint_fk',
      columns: [t.tenantId, t.endpointId],
      foreignColumns: [webhookEndpoints.tenantId, webhookEndpoints.id],
    }).onDelete('cascade'),
    check('webhook_deliveries_status', sql`${t.status} in ('pending', 'delivering', 'delivered', 'failed')`),
    // The drainer's claim: due rows of every tenant.
    index('webhook_deliveries_due').on(t.nextAttemptAt).where(sql`${t.status} in ('pending', 'delivering')`),
    // Newest-first lists per endpoint.
    index('webhook_deliveries_endpoint').on(t.tenantId, t.endpointId, t.createdAt, t.id),
    // Once per endpoint and key (nulls are distinct: other events are not limited).
    uniqueIndex('webhook_deliveries_dedupe').on(t.tenantId, t.endpointId, t.dedupeKey),
    // The retention job.
    index('webhook_deliveries_done').on(t.updatedAt).where(sql`${t.status} in ('delivered', 'failed')`),
  ],
)
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect
