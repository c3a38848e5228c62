import { lt, sql } from 'drizzle-orm'
import type { Database } from '../database'
import { usedJtis } from '../schema'
import { param, prepared } from './prepared'

// Every DPoP proof and attestation PoP runs it: prepared once per database.
const useJti = (db: Database) =>
  prepared(db, 'jti_use', (d) =>
    d
      .insert(usedJtis)
      .values({ tenantId: param('tenantId'), value: param('value'), expiresAt: param('expiresAt') })
      .onConflictDoUpdate({
        target: [usedJtis.tenantId, usedJtis.value],
        set: { expiresAt: param('expiresAt') },
        setWhere: lt(usedJtis.expiresAt, param('now')),
      })
      .returning({ value: usedJtis.value }),
  )

/** JWT ids of one tenant that may be used once (DPoP proofs, attestation PoPs). */
export function createJtiRepository(db: Database, tenantId: string) {
  return {
    /**
     * Records `value` until `expiresAt`; true for the one caller that records it first, false for a
     * replay. A row whose expiry passed is taken over, so a purge lagging behind refuses nothing.
     */
    async use(value: string, expiresAt: Date, now: Date): Promise<boolean> {
      const rows = await useJti(db).execute({
        tenantId,
        value,
        expiresAt: expiresAt.toISOString(),
        now: now.toISOString(),
      })
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
