import { foreignKey, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'
import { issuanceSessions } from './issuance'
import { tenants } from './tenants'

/**
 * Deferred issuance transactions (OpenID4VCI 1.0 §9): a credential request whose proofs were
 * verified (nonce consumed) while the attribute provider had no claims yet. The transaction id is
 * stored as a SHA-256 hash only; the row is deleted when its credentials are delivered (or cannot
 * be any more), and with its session.
 */
export const deferredCredentials = pgTable(
  'deferred_credentials',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    transactionIdHash: text().notNull(),
    sessionId: text().notNull(),
    credentialConfigurationId: text().notNull(),
    /** Verified public holder keys, one per credential of the batch; `[null]` without key binding. */
    holderKeys: jsonb().$type<(Record<string, unknown> | null)[]>().notNull(),
    /** Seconds the wallet is told to wait between deferred requests. */
    intervalSeconds: integer().notNull(),
    /**
     * The provider is not asked again before this time: the interval after its last "pending", or
     * the lease of the one poll asking it now (so two polls, on any pods, never both ask and issue).
     */
    nextAskAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.transactionIdHash] }),
    foreignKey({
      name: 'deferred_credentials_session_fk',
      columns: [t.tenantId, t.sessionId],
      foreignColumns: [issuanceSessions.tenantId, issuanceSessions.id],
    }).onDelete('cascade'),
    index('deferred_credentials_session').on(t.tenantId, t.sessionId),
  ],
)
export type DeferredCredentialRow = typeof deferredCredentials.$inferSelect

/**
 * The per-tenant key that wallets encrypt credential requests to (OpenID4VCI 1.0 §10): ECDH-ES
 * P-256, created on first use, the private JWK encrypted at rest (JwkCipher, bound to tenant and kid).
 */
export const credentialEncryptionKeys = pgTable('credential_encryption_keys', {
  tenantId: text()
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  kid: text().notNull(),
  publicJwk: jsonb().$type<Record<string, unknown>>().notNull(),
  privateJwkEncrypted: text().notNull(),
  createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
})
export type CredentialEncryptionKeyRow = typeof credentialEncryptionKeys.$inferSelect
