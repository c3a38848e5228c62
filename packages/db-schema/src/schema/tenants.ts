import type { IssuerDisplay } from '@credential-service/core-domain'
import { sql } from 'drizzle-orm'
import { jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core'

export const tenants = pgTable('tenants', {
  id: text().primaryKey(),
  name: text().notNull(),
  description: text(),
  /** `keep` or `drop-after-delivery`: what happens to verified presentation claims once delivered. */
  presentationRetention: text().notNull().default('keep'),
  /** `optional` or `required`: credential request/response encryption at the issuer (OpenID4VCI §10). */
  credentialEncryption: text().notNull().default('optional'),
  /** ISO 3166-1 alpha-2: the C= of the default key chain's certificates (mso_mdoc needs one). */
  country: text(),
  /** The issuer's metadata `display` entries (OpenID4VCI 1.0 §12.2.4); null: the name alone. */
  issuerDisplay: jsonb().$type<IssuerDisplay[]>(),
  /**
   * Random per creation of the id: management tokens carry it, so a token of a deleted tenant
   * does not work for a new tenant created with the same id (checklist S-108).
   */
  generation: text().notNull().default(sql`gen_random_uuid()::text`),
  createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
})
export type TenantRow = typeof tenants.$inferSelect
