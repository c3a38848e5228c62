import type { Database } from '../database'
import { nonces } from '../schema'
import { deleteExpiredBatch } from './delete-expired-batch'
import { param, prepared } from './prepared'

const tenant = param('tenantId')
const at = param('at')

// The nonce endpoint's statement, prepared once per database (the credential endpoint spends a
// nonce in its session read: issuance.ts `getSpendingNonce`).
const statements = {
  issueNonce: (db: Database) =>
    prepared(db, 'nonce_issue', (d) =>
      d.insert(nonces).values({ tenantId: tenant, value: param('value'), expiresAt: at }),
    ),
}

/** c_nonce values of one tenant. */
export function createNonceRepository(db: Database, tenantId: string) {
  return {
    async issue(value: string, expiresAt: Date): Promise<void> {
      await statements.issueNonce(db).execute({ tenantId, value, at: expiresAt.toISOString() })
    },
  }
}

/**
 * Deletes up to `limit` nonces of any tenant that expired before `before`; returns how many. The
 * nonce endpoint is open to anyone, so unredeemed nonces must not pile up (index nonces_expiry).
 */
export async function purgeExpiredNonces(db: Database, before: Date, limit = 1000): Promise<number> {
  return (await deleteExpiredBatch(db, nonces, nonces.value, before, limit)).length
}
