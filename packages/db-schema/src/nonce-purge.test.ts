import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import type { Database } from './database'
import { createIssuanceSessionRepository } from './repositories/issuance'
import { purgeExpiredNonces } from './repositories/nonces'
import { queryRows, testDatabases } from './testing'

describe.each(testDatabases())('expired nonce purge on $name', ({ open }) => {
  it('deletes only expired spent nonces, of every tenant, in batches; a live one stays spent', async () => {
    const database = await open()
    const tenants = [`np-${crypto.randomUUID()}`, `np-${crypto.randomUUID()}`]
    try {
      const now = new Date()
      const past = new Date(now.getTime() - 60_000)
      const future = new Date(now.getTime() + 60_000)
      for (const tenant of tenants) {
        await database.db.execute(sql`insert into tenants (id, name) values (${tenant}, 'x')`)
        for (const value of ['old-1', 'old-2', 'old-3']) await spend(database.db, tenant, value, past)
        expect(await spend(database.db, tenant, 'live', future)).toBe(true)
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
      // A live record still refuses a second spend; an expired nonce's record is no longer needed
      // (the issuer refuses an expired nonce before it reaches the database).
      for (const tenant of tenants) expect(await spend(database.db, tenant, 'live', future)).toBe(false)
    } finally {
      await database.close()
    }
  })

  it('I-51, S-20, S-103: the credential endpoint spends a c_nonce once, per tenant, across readers', async () => {
    const database = await open()
    const [tenant, other] = [`np-${crypto.randomUUID()}`, `np-${crypto.randomUUID()}`]
    try {
      const future = new Date(Date.now() + 60_000)
      for (const id of [tenant, other])
        await database.db.execute(sql`insert into tenants (id, name) values (${id}, 'x')`)
      expect(await spend(database.db, tenant, 'fresh', future)).toBe(true)
      expect(await spend(database.db, tenant, 'fresh', future)).toBe(false)
      // Another tenant's record of the same value is its own (the issuer's MAC binds the tenant).
      expect(await spend(database.db, other, 'fresh', future)).toBe(true)
      // Concurrent spends of one nonce: exactly one wins (the primary key orders them).
      const raced = await Promise.all(
        Array.from({ length: 4 }, () => spend(database.db, tenant, 'raced', future)),
      )
      expect(raced.filter(Boolean)).toHaveLength(1)

      // No session to read: the nonce is spent all the same (the request is refused as a whole).
      const sessions = createIssuanceSessionRepository(database.db, tenant)
      expect(await sessions.getSpendingNonce('ses_missing', { value: 'orphan', expiresAt: future })).toEqual({
        session: undefined,
        nonceSpent: false,
      })
      expect(await spend(database.db, tenant, 'orphan', future)).toBe(false)
      // A nonce the issuer did not accept (undefined) is not recorded: the session is read alone.
      const id = await sessionFor(database.db, tenant)
      const refused = await sessions.getSpendingNonce(id, undefined)
      expect(refused.session?.id).toBe(id)
      expect(refused.nonceSpent).toBe(false)
    } finally {
      await database.close()
    }
  })
})

async function sessionFor(db: Database, tenantId: string): Promise<string> {
  const id = `ses_${crypto.randomUUID()}`
  await createIssuanceSessionRepository(db, tenantId).insert({
    id,
    status: 'token_issued',
    credentialConfigurationIds: ['pid'],
    preAuthorizedCodeHash: `code-${id}`,
    createdByClientId: 'cli_test',
    expiresAt: new Date(Date.now() + 60_000),
  })
  return id
}

/** Spends `nonce` (living until `expiresAt`) in the read of a session made for it; whether it was unspent. */
async function spend(db: Database, tenantId: string, nonce: string, expiresAt: Date): Promise<boolean> {
  const id = await sessionFor(db, tenantId)
  const sessions = createIssuanceSessionRepository(db, tenantId)
  const { session, nonceSpent } = await sessions.getSpendingNonce(id, { value: nonce, expiresAt })
  expect(session?.id).toBe(id)
  return nonceSpent
}
