import { and, desc, eq } from 'drizzle-orm'
import type { Database, Executor } from '../database'
import {
  type NewSchemaMetadataVersionRow,
  type SchemaMetadataVersionRow,
  schemaMetadataVersions,
} from '../schema'

/** A tenant's signed type metadata versions; every statement filters on the tenant. */
export function createSchemaMetadataVersionRepository(db: Database, tenantId: string) {
  const table = schemaMetadataVersions
  return {
    /** The head of the vct's chain: the version signed last. */
    async latest(vct: string, tx: Executor = db): Promise<SchemaMetadataVersionRow | undefined> {
      const [row] = await tx
        .select()
        .from(table)
        .where(and(eq(table.tenantId, tenantId), eq(table.vct, vct)))
        .orderBy(desc(table.ordinal))
        .limit(1)
      return row
    },
    /** Appends a version; a concurrent append to the same chain fails with a unique violation. */
    async append(row: Omit<NewSchemaMetadataVersionRow, 'tenantId'>, tx: Executor = db) {
      const [saved] = await tx
        .insert(table)
        .values({ ...row, tenantId })
        .returning()
      return saved as SchemaMetadataVersionRow
    },
  }
}
export type SchemaMetadataVersionRepository = ReturnType<typeof createSchemaMetadataVersionRepository>
