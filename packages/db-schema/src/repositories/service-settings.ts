import { eq, sql } from 'drizzle-orm'
import type { Database, Executor } from '../database'
import { serviceSettings } from '../schema'

const MASTER_SECRET_KEY = 'master_secret_fingerprint'

/**
 * Records the MASTER_SECRET fingerprint on first start and returns the one on record. The first
 * writer wins when several processes start at once.
 */
export async function recordMasterSecretFingerprint(db: Database, fingerprint: string): Promise<string> {
  await db
    .insert(serviceSettings)
    .values({ key: MASTER_SECRET_KEY, value: fingerprint })
    .onConflictDoNothing()
  const [row] = await db.select().from(serviceSettings).where(eq(serviceSettings.key, MASTER_SECRET_KEY))
  return row?.value ?? fingerprint
}

/** The fingerprint on record, without recording one (read-only checks). */
export async function recordedMasterSecretFingerprint(db: Database): Promise<string | undefined> {
  try {
    const [row] = await db.select().from(serviceSettings).where(eq(serviceSettings.key, MASTER_SECRET_KEY))
    return row?.value
  } catch {
    return undefined // no settings table yet: a database from before 5.0
  }
}

/**
 * Serialises work on one tenant across processes for the rest of the transaction (config import
 * when several pods start at once).
 */
export async function lockTenant(tx: Executor, tenantId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`tenant:${tenantId}`}))`)
}
