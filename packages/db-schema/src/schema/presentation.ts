import { sql } from 'drizzle-orm'
import {
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core'
import { oneOf } from './one-of'
import { tenants } from './tenants'

/**
 * The statuses a presentation session is stored with, which a CHECK holds the column to.
 * `expired` is never stored: a `pending` session past its `expires_at` reads as expired.
 */
export const PRESENTATION_SESSION_STATUSES = ['pending', 'verified', 'failed'] as const

/**
 * One OpenID4VP authorization request and its outcome. `request_id` (in the request and response
 * URIs) is random and is not the session id; the response encryption key is per request and
 * stored encrypted.
 */
export const presentationSessions = pgTable(
  'presentation_sessions',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    id: text().notNull(),
    requestId: text().notNull(),
    status: text().notNull(),
    presentationConfigId: text().notNull(),
    clientId: text().notNull(),
    nonce: text().notNull(),
    state: text().notNull(),
    responseMode: text().notNull(),
    redirectUri: text(),
    /** transport dc-api: the page's origin the presentation must be bound to, and the protocols offered. */
    origin: text(),
    dcApiProtocols: text().array(),
    transactionData: jsonb().$type<string[]>(),
    webhookEndpointId: text(),
    encryptionKey: text().notNull(),
    encryptionKid: text().notNull(),
    createdByClientId: text().notNull(),
    expiresAt: timestamp({ withTimezone: true }).notNull(),
    requestFetchedAt: timestamp({ withTimezone: true }),
    responseReceivedAt: timestamp({ withTimezone: true }),
    /** When the expiry sweep claimed this unanswered request's expiry: set once, by one process. */
    expiryReportedAt: timestamp({ withTimezone: true }),
    responseCodeHash: text(),
    /**
     * Disclosed claims per DCQL credential id, encrypted (SessionDataCipher, bound to tenant and
     * session id); kept per the tenant's retention setting, released once for a response code.
     */
    resultEncrypted: text(),
    /** The result in clear, as written before it was encrypted: see `legacyClaims` of issuance. */
    legacyResult: jsonb('result').$type<Record<string, unknown>>(),
    failureReason: text(),
    deliveryStatus: text().notNull().default('none'),
    deliveryAttempts: integer().notNull().default(0),
    deliveryError: text(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    uniqueIndex('presentation_sessions_request').on(t.tenantId, t.requestId),
    check('presentation_sessions_status_check', oneOf(t.status, PRESENTATION_SESSION_STATUSES)),
    index('presentation_sessions_status').on(t.tenantId, t.status, t.createdAt),
    // Newest-first session lists, and the retention job across tenants.
    index('presentation_sessions_created').on(t.tenantId, t.createdAt, t.id),
    index('presentation_sessions_expiry').on(t.expiresAt),
    // The expiry sweep: pending requests whose expiry is not reported yet.
    index('presentation_sessions_expiry_due')
      .on(t.expiresAt)
      .where(sql`${t.status} = 'pending' and ${t.expiryReportedAt} is null`),
  ],
)
export type PresentationSessionRow = typeof presentationSessions.$inferSelect
