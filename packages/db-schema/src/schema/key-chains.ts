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
import type { JWK } from 'jose'
import { tenants } from './tenants'

/**
 * Key chains (spec §2.4): the active key, an optional root (CA) key, and the previous key kept
 * through a grace period after rotation. `*_jwk` columns hold one encrypted JWK each (private for
 * `db`, public for external providers); `*_public_jwk` keep the public half in clear for JWKS.
 * The CHECK is the last line of defence of spec §7: a write that leaves a non-`db` key chain
 * without `external_key_id` is aborted.
 */
export const keyChains = pgTable(
  'key_chains',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    id: text().notNull(),
    description: text(),
    kmsProvider: text().notNull().default('db'),
    externalKeyId: text(),
    algorithm: text().notNull(),
    certificateMode: text().notNull(),
    subject: text().notNull(),
    dnsNames: text().array().notNull().default(sql`'{}'`),
    activeJwk: text().notNull(),
    activeKid: text().notNull(),
    activePublicJwk: jsonb().$type<JWK>().notNull(),
    activeCertificates: text().array().notNull().default(sql`'{}'`),
    rootJwk: text(),
    rootCertificate: text(),
    previousJwk: text(),
    previousKid: text(),
    previousPublicJwk: jsonb().$type<JWK>(),
    previousCertificates: text().array(),
    /** `certificate_mode` of the rotated-out key: a registrar chain's CA is never an issuer anchor. */
    previousCertificateMode: text(),
    previousExpiresAt: timestamp({ withTimezone: true }),
    rotationEnabled: boolean().notNull().default(false),
    rotationIntervalDays: integer().notNull().default(90),
    rotationGraceDays: integer().notNull().default(30),
    rotatedAt: timestamp({ withTimezone: true }),
    nextRotationAt: timestamp({ withTimezone: true }),
    /**
     * The tenant's default signing key chain: used by credential configurations that name none.
     * At most one per tenant (the partial unique index), so processes that create it on first
     * need at once insert one row and the others find it (`on conflict do nothing`).
     */
    isDefault: boolean().notNull().default(false),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    check(
      'key_chains_kms_provider_known',
      sql`${t.kmsProvider} in ('db', 'vault', 'aws-kms', 'pkcs11', 'azure-key-vault', 'gcp-kms')`,
    ),
    check(
      'key_chains_external_key_id_required',
      sql`${t.kmsProvider} = 'db' or ${t.externalKeyId} is not null`,
    ),
    check('key_chains_previous_complete', sql`(${t.previousJwk} is null) = (${t.previousKid} is null)`),
    uniqueIndex('key_chains_one_default_per_tenant').on(t.tenantId).where(sql`${t.isDefault}`),
    index('key_chains_rotation_due').on(t.nextRotationAt).where(sql`${t.rotationEnabled}`),
  ],
)
export type KeyChainRow = typeof keyChains.$inferSelect
export type NewKeyChainRow = typeof keyChains.$inferInsert
