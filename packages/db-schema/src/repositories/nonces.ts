import type { Database } from '../database'
import { nonces } from '../schema'
import { deleteExpiredBatch } from './delete-expired-batch'

/**
 * Deletes up to `limit` spent-nonce records of any tenant that expired before `before`; returns how
 * many. An expired c_nonce is refused before its record is looked at, so the record is no longer
 * needed (index nonces_expiry).
 */
export async function purgeExpiredNonces(db: Database, before: Date, limit = 1000): Promise<number> {
  return (await deleteExpiredBatch(db, nonces, nonces.value, before, limit)).length
}
