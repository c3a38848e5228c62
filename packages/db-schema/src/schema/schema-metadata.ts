import { integer, pgTable, primaryKey, text, timestamp, unique } from 'drizzle-orm/pg-core'
import { tenants } from './tenants'

/**
 * Signed versions of a tenant's type metadata documents, one chain per `vct`. The primary key on
 * `ordinal` makes two concurrent appends to the same chain collide, so a chain never forks; the
 * documents themselves are not kept (the caller publishes them), only what chaining needs.
 */
export const schemaMetadataVersions = pgTable(
  'schema_metadata_versions',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    vct: text().notNull(),
    /** 1 for the first signed version of the vct, then previous + 1. */
    ordinal: integer().notNull(),
    version: text().notNull(),
    integrity: text().notNull(),
    previousIntegrity: text(),
    /** No foreign key: deleting the key chain later does not erase the record. */
    keyChainId: text().notNull(),
    kid: text().notNull(),
    signedBy: text().notNull(),
    signedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.vct, t.ordinal] }),
    unique('schema_metadata_versions_version_unique').on(t.tenantId, t.vct, t.version),
  ],
)
export type SchemaMetadataVersionRow = typeof schemaMetadataVersions.$inferSelect
export type NewSchemaMetadataVersionRow = typeof schemaMetadataVersions.$inferInsert
