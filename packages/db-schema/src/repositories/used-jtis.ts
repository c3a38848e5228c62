import { lt, sql } from 'drizzle-orm'
import type { Database } from '../database'
import { usedJtis } from '../schema'

/** JWT ids of one tenant that may be used once (DPoP proofs, attestation PoPs). */
export function createJtiRepository(db: Database, tenantId: string) {
  return {
    /**
     * Records `value` until `expiresAt`; true for the one caller that records it first, false for a
     * replay. A row whose expiry passed is taken over, so a purge lagging behind refuses nothing.
     */
    async use(value: string, expiresAt: Date, now: Date): Promise<boolean> {
      const rows = await db
        .insert(usedJtis)
        .values({ tenantId, value, expiresAt })
        .onConflictDoUpdate({
          target: [usedJtis.tenantId, usedJtis.value],
          set: { expiresAt },
          setWhere: lt(usedJtis.expiresAt, now),
        })
        .returning({ value: usedJtis.value })
      return rows.length === 1
    },
  }
}

/** Deletes up to `limit` expired JWT ids of any tenant; returns how many. */
export async function purgeExpiredJtis(db: Database, before: Date, limit = 1000): Promise<number> {
  const expired = db
    .select({ tenantId: usedJtis.tenantId, value: usedJtis.value })
    .from(usedJtis)
    .where(lt(usedJtis.expiresAt, before))
    .limit(limit)
  const rows = await db
    .delete(usedJtis)
    .where(sql`(${usedJtis.tenantId}, ${usedJtis.value}) in ${expired}`)
    .returning({ value: usedJtis.value })
  return rows.length
}
