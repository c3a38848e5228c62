import {
  queryRows,
  TEST_MASTER_SECRET,
  type TestDatabase,
  testDatabases,
} from '@credential-service/db-schema/testing'
import { createServer } from '@credential-service/server-kit'
import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { buildIssuerApp, parseIssuerConfig } from '../src/app'

describe('issuer nonce purge', () => {
  it('OID4VCI §7: a running issuer deletes the records of spent c_nonces once they expired, keeps live ones', async () => {
    // Alone: the test reads every nonce of the database.
    const database = await (testDatabases({ alone: true })[0] as TestDatabase).open()
    const config = parseIssuerConfig({ PUBLIC_URL: 'http://localhost', MASTER_SECRET: TEST_MASTER_SECRET })
    const app = await createServer({
      logLevel: 'silent',
      ping: database.ping,
      apps: [buildIssuerApp({ config, database, noncePurgeSeconds: 1 })],
    })
    try {
      await database.db.execute(sql`insert into tenants (id, name) values ('purge', 'x')`)
      const spent = (value: string, expiresAt: Date) =>
        database.db.execute(
          sql`insert into nonces (tenant_id, value, expires_at) values ('purge', ${value}, ${expiresAt.toISOString()})`,
        )
      await spent('expired', new Date(Date.now() - 1000))
      await spent('live', new Date(Date.now() + 60_000))
      await app.ready()
      const left = async () =>
        (await queryRows<{ value: string }>(database.db, sql`select value from nonces order by value`)).map(
          (row) => row.value,
        )
      for (let i = 0; i < 40 && (await left()).length > 1; i++) await new Promise((r) => setTimeout(r, 100))
      expect(await left()).toStrictEqual(['live'])
    } finally {
      await app.close()
      await database.close()
    }
  })
})
