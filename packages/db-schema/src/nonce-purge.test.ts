import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
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
      for (const tenant of tenants)
        expect(await createNonceRepository(database.db, tenant).consume('live', now)).toBe(true)
    } finally {
      await database.close()
    }
  })
})
