import { lt, sql } from 'drizzle-orm'
import type { AnyPgColumn } from 'drizzle-orm/pg-core'
import type { Executor } from '../database'
import type { authorizationRequests, issuanceSessions, nonces, presentationSessions } from '../schema'

/**
 * Deletes up to `limit` rows of any tenant of a tenant-owned table whose `expires_at` lies before
 * `before`, keyed by `(tenant_id, key)`; answers the deleted keys. One bounded statement per call,
 * so purge jobs never hold long locks.
 */
export async function deleteExpiredBatch(
  db: Executor,
  table: typeof nonces | typeof issuanceSessions | typeof presentationSessions | typeof authorizationRequests,
  key: AnyPgColumn,
  before: Date,
  limit: number,
): Promise<{ tenantId: string; key: string }[]> {
  const expired = db
    .select({ tenantId: table.tenantId, key })
    .from(table)
    .where(lt(table.expiresAt, before))
    .limit(limit)
  return (await db
    .delete(table)
    .where(sql`(${table.tenantId}, ${key}) in ${expired}`)
    .returning({ tenantId: table.tenantId, key })) as { tenantId: string; key: string }[]
}
