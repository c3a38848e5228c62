import { foreignKey, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'
import { presentationConfigs } from './configs'
import { tenants } from './tenants'

/**
 * A tenant's connection to its registrar (docs/registrar.md): one row per tenant. The client
 * secret is encrypted with MASTER_SECRET; `relying_party_*` are filled once the tenant is registered.
 */
export const registrarConfigs = pgTable('registrar_configs', {
  tenantId: text()
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  baseUrl: text().notNull(),
  tokenUrl: text().notNull(),
  clientId: text().notNull(),
  clientSecret: text().notNull(),
  relyingPartyId: text(),
  relyingPartyName: text(),
  relyingPartyRoles: text().array(),
  registeredAt: timestamp({ withTimezone: true }),
  createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
})
export type RegistrarConfigRow = typeof registrarConfigs.$inferSelect

/**
 * The registration certificate of a presentation configuration, sent as `verifier_info` in its
 * request objects while `dcql_hash` still matches the configuration's DCQL query; it goes with
 * the configuration.
 */
export const registrationCertificates = pgTable(
  'registration_certificates',
  {
    tenantId: text().notNull(),
    presentationConfigId: text().notNull(),
    registrarCertificateId: text().notNull(),
    jwt: text().notNull(),
    dcqlHash: text().notNull(),
    expiresAt: timestamp({ withTimezone: true }),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.presentationConfigId] }),
    foreignKey({
      name: 'registration_certificates_presentation_config_fk',
      columns: [t.tenantId, t.presentationConfigId],
      foreignColumns: [presentationConfigs.tenantId, presentationConfigs.id],
    }).onDelete('cascade'),
  ],
)
export type RegistrationCertificateRow = typeof registrationCertificates.$inferSelect
