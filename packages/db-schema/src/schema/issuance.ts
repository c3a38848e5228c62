import { sql } from 'drizzle-orm'
import {
  boolean,
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
 * The statuses an issuance session is stored with, which a CHECK holds the column to. `expired`
 * is never stored: an `offered` session past its `expires_at` reads as expired.
 */
export const ISSUANCE_SESSION_STATUSES = [
  'offered',
  'token_issued',
  'credential_issued',
  'completed',
  'failed',
] as const

/**
 * One credential offer and its way through token and credential requests. The pre-authorized code
 * and the transaction code are stored as SHA-256 hashes only.
 */
export const issuanceSessions = pgTable(
  'issuance_sessions',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    id: text().notNull(),
    status: text().notNull(),
    credentialConfigurationIds: text().array().notNull(),
    issuedConfigurationIds: text().array().notNull().default(sql`'{}'`),
    /**
     * Claims per configuration id, validated against the derived schemas at offer time, encrypted
     * (SessionDataCipher, bound to tenant and session id). Null once the offer can no longer issue.
     */
    claimsEncrypted: text(),
    /**
     * Claims in clear, as written before they were encrypted: read while present, sealed into
     * `claimsEncrypted` by the retention job. Never written any more; dropped in a later release.
     */
    legacyClaims: jsonb('claims').$type<Record<string, Record<string, unknown>>>(),
    preAuthorizedCodeHash: text().notNull(),
    txCodeHash: text(),
    /** `tx_code` object of the offer (input_mode, length, description), to serve it by reference. */
    txCodeSpec: jsonb().$type<{ inputMode: string; length: number; description?: string | undefined }>(),
    txCodeAttempts: integer().notNull().default(0),
    /** Authorization code grant of the offer (OpenID4VCI §4.1.1): `issuer_state`, hashed. */
    issuerStateHash: text(),
    /**
     * The external access token bound to this session (its server id and `jti`, or its hash):
     * the credential endpoint finds the session of a token it saw before by it.
     */
    externalTokenKey: text(),
    byReference: boolean().notNull().default(false),
    /** By-reference offers only: the pre-authorized code, encrypted, to serve the offer once. */
    offerCodeEncrypted: text(),
    createdByClientId: text().notNull(),
    /** The offer's business reference, copied to the status list entries of its credentials. */
    statusHandle: text(),
    failureReason: text(),
    expiresAt: timestamp({ withTimezone: true }).notNull(),
    offerFetchedAt: timestamp({ withTimezone: true }),
    tokenIssuedAt: timestamp({ withTimezone: true }),
    credentialIssuedAt: timestamp({ withTimezone: true }),
    /**
     * When the expiry sweep claimed this unredeemed (or redeemed and abandoned) offer's expiry
     * (and stored its `issuance.expired` events): set once, by one process.
     */
    expiryReportedAt: timestamp({ withTimezone: true }),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    uniqueIndex('issuance_sessions_code').on(t.tenantId, t.preAuthorizedCodeHash),
    uniqueIndex('issuance_sessions_issuer_state').on(t.tenantId, t.issuerStateHash),
    uniqueIndex('issuance_sessions_external_token').on(t.tenantId, t.externalTokenKey),
    check('issuance_sessions_status_check', oneOf(t.status, ISSUANCE_SESSION_STATUSES)),
    index('issuance_sessions_status').on(t.tenantId, t.status, t.createdAt),
    // Newest-first session lists, and the retention job across tenants.
    index('issuance_sessions_created').on(t.tenantId, t.createdAt, t.id),
    index('issuance_sessions_expiry').on(t.expiresAt),
    // The expiry sweep: open or redeemed offers whose expiry is not reported yet.
    index('issuance_sessions_expiry_due')
      .on(t.expiresAt)
      .where(sql`${t.status} in ('offered', 'token_issued') and ${t.expiryReportedAt} is null`),
  ],
)
export type IssuanceSessionRow = typeof issuanceSessions.$inferSelect

/**
 * Spent c_nonce values (OpenID4VCI §7), each until it expires: the nonce endpoint stores nothing
 * (stateless nonces, apps/issuer `c-nonces.ts`), the credential endpoint inserts the nonce it
 * spends, and a second insert conflicts.
 */
export const nonces = pgTable(
  'nonces',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    value: text().notNull(),
    expiresAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.value] }), index('nonces_expiry').on(t.expiresAt)],
)

/**
 * Notification ids handed out with credentials (OpenID4VCI §11), the wallet's event once it
 * arrives, and the outcome of delivering it to the configuration's webhook endpoint.
 */
export const issuanceNotifications = pgTable(
  'issuance_notifications',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    id: text().notNull(),
    sessionId: text().notNull(),
    credentialConfigurationId: text().notNull(),
    event: text(),
    eventDescription: text(),
    receivedAt: timestamp({ withTimezone: true }),
    deliveryStatus: text().notNull().default('none'),
    deliveryAttempts: integer().notNull().default(0),
    deliveryError: text(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    index('issuance_notifications_session').on(t.tenantId, t.sessionId),
  ],
)
export type IssuanceNotificationRow = typeof issuanceNotifications.$inferSelect
