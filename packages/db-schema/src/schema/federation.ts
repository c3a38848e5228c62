import { foreignKey, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'
import { keyChains } from './key-chains'
import { tenants } from './tenants'

/** A trust anchor's entity identifier and federation keys (a JWK Set), as configured. */
export interface FederationAnchorValue {
  entityId: string
  jwks: { keys: Record<string, unknown>[] }
}
/** A trust mark a superior or accredited issuer gave the tenant (OpenID Federation 1.0 §7). */
export interface FederationTrustMarkValue {
  trustMarkType: string
  trustMark: string
}

/**
 * A tenant's OpenID Federation membership (docs/federation.md): one row per tenant. Its issuer
 * and verifier are federation entities whose entity configurations are signed with `key_chain_id`
 * (a chain no credential or presentation configuration signs with), naming `authority_hints`.
 */
export const federationMemberships = pgTable(
  'federation_memberships',
  {
    tenantId: text()
      .primaryKey()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    keyChainId: text().notNull(),
    authorityHints: text().array().notNull(),
    trustAnchors: jsonb().$type<FederationAnchorValue[]>().notNull().default([]),
    trustMarks: jsonb().$type<FederationTrustMarkValue[]>().notNull().default([]),
    /** Subordinate statements superiors issued about the tenant's entities, as JWTs. */
    subordinateStatements: jsonb().$type<string[]>().notNull().default([]),
    lifetimeSeconds: integer().notNull().default(86_400),
    organizationName: text(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // A key chain signing the tenant's entity configurations cannot be deleted from under them.
    foreignKey({
      name: 'federation_memberships_key_chain_fk',
      columns: [t.tenantId, t.keyChainId],
      foreignColumns: [keyChains.tenantId, keyChains.id],
    }),
  ],
)
export type FederationMembershipRow = typeof federationMemberships.$inferSelect
