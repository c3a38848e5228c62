import { index, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'
import { tenants } from './tenants'

/** Wallet providers a tenant trusts: wallet and key attestations chain to their trust lists' certificates. */
export const walletProviders = pgTable(
  'wallet_providers',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    id: text().notNull(),
    name: text().notNull(),
    description: text(),
    /** Deprecated (issue 25): emptied by migration 0026 and at every save; dropped in a later version. */
    trustAnchors: text().array().notNull(),
    /** Trust list ids; checked at save and at a list's delete under row locks (no array FKs). */
    trustListIds: text().array(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] })],
)
export type WalletProviderRow = typeof walletProviders.$inferSelect

/**
 * JWT ids seen within their lifetime (DPoP proofs RFC 9449 §11.1, client attestation PoPs ABCA §9):
 * inserted once with ON CONFLICT DO NOTHING, so a replay loses on any pod.
 */
export const usedJtis = pgTable(
  'used_jtis',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    /** `<purpose>:<key thumbprint>:<jti>`, so two keys or two purposes never collide. */
    value: text().notNull(),
    expiresAt: timestamp({ withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.value] }), index('used_jtis_expiry').on(t.expiresAt)],
)
