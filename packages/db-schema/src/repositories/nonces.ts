import { and, eq, gt } from 'drizzle-orm'
import type { Database } from '../database'
import { nonces } from '../schema'
import { deleteExpiredBatch } from './delete-expired-batch'
import { param, prepared } from './prepared'

const tenant = param('tenantId')
const at = param('at')

// The nonce endpoint's and the proof check's statements, prepared once per database.
const statements = {
  issueNonce: (db: Database) =>
    prepared(db, 'nonce_issue', (d) =>
      d.insert(nonces).values({ tenantId: tenant, value: param('value'), expiresAt: at }),
    ),
  consumeNonce: (db: Database) =>
    prepared(db, 'nonce_consume', (d) =>
      d
        .delete(nonces)
        .where(and(eq(nonces.tenantId, tenant), eq(nonces.value, param('value')), gt(nonces.expiresAt, at)))
        .returning({ value: nonces.value }),
    ),
}

/** c_nonce values of one tenant. */
export function createNonceRepository(db: Database, tenantId: string) {
  return {
    async issue(value: string, expiresAt: Date): Promise<void> {
      await statements.issueNonce(db).execute({ tenantId, value, at: expiresAt.toISOString() })
    },

    /** Consumes a nonce atomically: true for the one caller that finds it unexpired. */
    async consume(value: string, at: Date): Promise<boolean> {
      const rows = await statements.consumeNonce(db).execute({ tenantId, value, at: at.toISOString() })
      return rows.length === 1
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
