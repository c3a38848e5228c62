import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import type { Database } from './database'
import { createIssuanceSessionRepository } from './repositories/issuance'
import { createNonceRepository, purgeExpiredNonces } from './repositories/nonces'
import { queryRows, testDatabases } from './testing'

describe.each(testDatabases())('expired nonce purge on $name', ({ open }) => {
  it('deletes only expired nonces, of every tenant, in batches; a live nonce still redeems', async () => {
    const database = await open()
    const tenants = [`np-${crypto.randomUUID()}`, `np-${crypto.randomUUID()}`]
    try {
      const now = new Date()
      const past = new Date(now.getTime() - 60_000)
      const future = new Date(now.getTime() + 60_000)
      for (const tenant of tenants) {
        await database.db.execute(sql`insert into tenants (id, name) values (${tenant}, 'x')`)
        const nonces = createNonceRepository(database.db, tenant)
        for (const value of ['old-1', 'old-2', 'old-3']) await nonces.issue(value, past)
        await nonces.issue('live', future)
      }
      const inScope = sql`tenant_id in (${tenants[0]}, ${tenants[1]})`
      const count = async () =>
        (
          await queryRows<{ n: number }>(
            database.db,
            sql`select count(*)::int as n from nonces where ${inScope}`,
          )
        )[0]?.n
      // Other suites share a PostgreSQL database: purge until nothing expired is left, in batches of 2.
      let purged = 0
      for (let batch = await purgeExpiredNonces(database.db, now, 2); batch > 0; ) {
        expect(batch).toBeLessThanOrEqual(2)
        purged += batch
        batch = await purgeExpiredNonces(database.db, now, 2)
      }
      expect(purged).toBeGreaterThanOrEqual(6)
      expect(await count()).toBe(2)
      for (const tenant of tenants) expect(await spend(database.db, tenant, 'live', now)).toBe(true)
    } finally {
      await database.close()
    }
  })

  it('I-51, S-20, S-21: the credential endpoint spends a c_nonce once, of its own tenant, while it lives', async () => {
    const database = await open()
    const [tenant, other] = [`np-${crypto.randomUUID()}`, `np-${crypto.randomUUID()}`]
    try {
      const now = new Date()
      for (const id of [tenant, other])
        await database.db.execute(sql`insert into tenants (id, name) values (${id}, 'x')`)
      const nonces = createNonceRepository(database.db, tenant)
      await nonces.issue('fresh', new Date(now.getTime() + 60_000))
      await nonces.issue('stale', new Date(now.getTime() - 1))
      await createNonceRepository(database.db, other).issue('theirs', new Date(now.getTime() + 60_000))

      expect(await spend(database.db, tenant, 'fresh', now)).toBe(true)
      expect(await spend(database.db, tenant, 'fresh', now)).toBe(false)
      expect(await spend(database.db, tenant, 'stale', now)).toBe(false)
      expect(await spend(database.db, tenant, 'theirs', now)).toBe(false)
      expect(await spend(database.db, other, 'theirs', now)).toBe(true)

      // No session to read: the nonce is spent all the same (the request is refused as a whole).
      await nonces.issue('orphan', new Date(now.getTime() + 60_000))
      const sessions = createIssuanceSessionRepository(database.db, tenant)
      expect(await sessions.getSpendingNonce('ses_missing', 'orphan', now)).toEqual({
        session: undefined,
        nonceSpent: false,
      })
      expect(await spend(database.db, tenant, 'orphan', now)).toBe(false)
    } finally {
      await database.close()
    }
  })
})

/** Spends `nonce` in the read of a session made for it; whether the nonce was live. */
async function spend(db: Database, tenantId: string, nonce: string, at: Date): Promise<boolean> {
  const sessions = createIssuanceSessionRepository(db, tenantId)
  const id = `ses_${crypto.randomUUID()}`
  await sessions.insert({
    id,
    status: 'token_issued',
    credentialConfigurationIds: ['pid'],
    preAuthorizedCodeHash: `code-${id}`,
    createdByClientId: 'cli_test',
    expiresAt: new Date(at.getTime() + 60_000),
  })
  const { session, nonceSpent } = await sessions.getSpendingNonce(id, nonce, at)
  expect(session?.id).toBe(id)
  return nonceSpent
}
