import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DatabaseHandle } from './client'
import type { Database } from './database'
import {
  claimDueWebhookDeliveries,
  createWebhookDeliveryRepository,
  enqueueWebhookDelivery,
  finishWebhookDelivery,
} from './repositories/webhook-deliveries'
import { queryRows, type TestDatabase, testDatabases } from './testing'

// Rows of these suites are due in 2100 and claimed with a clock there: the drainers of other suites
// sharing a PostgreSQL database (which claim at the real time) never see them, nor these claims theirs.
const FUTURE = Date.UTC(2100, 0, 1)
const LEASE_MS = 60_000
let serial = 0
const created: string[] = []

async function setUp(db: Database) {
  const tenant = `wd-${crypto.randomUUID()}`
  await db.execute(sql`insert into tenants (id, name) values (${tenant}, 'x')`)
  created.push(tenant)
  await db.execute(sql`
    insert into webhook_endpoints (tenant_id, id, url, auth_type, events) values
      (${tenant}, 'all', 'https://hooks.example.com/all', 'none', null),
      (${tenant}, 'results', 'https://hooks.example.com/results', 'none', '{presentation.result}'::text[])`)
  return tenant
}

function enqueue(
  db: Database,
  tenant: string,
  endpointId: string,
  eventType = 'presentation.result',
  at = new Date(FUTURE),
) {
  return enqueueWebhookDelivery(db, {
    tenantId: tenant,
    id: `whd_test${++serial}${crypto.randomUUID().slice(0, 8)}`,
    endpointId,
    eventType,
    sessionId: 'ses_x',
    payloadEncrypted: 'v1.x.y.z',
    at,
  })
}

/** The suites' rows go with their tenants, so no run leaves due rows for the next. */
async function dropTenants(db: Database) {
  for (const tenant of created.splice(0)) await db.execute(sql`delete from tenants where id = ${tenant}`)
}

const claim = (db: Database, now: number, limit = 100) =>
  claimDueWebhookDeliveries(db, {
    now: new Date(now),
    leaseUntil: new Date(now + LEASE_MS),
    limit,
  })

describe.each(testDatabases())('webhook outbox repository on $name', (testDatabase: TestDatabase) => {
  let database: DatabaseHandle
  beforeAll(async () => {
    database = await testDatabase.open()
  })
  afterAll(async () => {
    await dropTenants(database.db)
    await database.close()
  })

  it("an event type the endpoint does not subscribe to is never stored; another tenant's endpoint neither", async () => {
    const tenant = await setUp(database.db)
    const other = await setUp(database.db)
    expect(await enqueue(database.db, tenant, 'results', 'issuance.notification')).toBe(false)
    expect(await enqueue(database.db, tenant, 'results', 'presentation.result')).toBe(true)
    expect(await enqueue(database.db, tenant, 'all', 'issuance.notification')).toBe(true)
    expect(await enqueue(database.db, tenant, 'missing')).toBe(false)
    const rows = await queryRows<{ endpoint_id: string; event_type: string }>(
      database.db,
      sql`select endpoint_id, event_type from webhook_deliveries where tenant_id = ${tenant} order by endpoint_id`,
    )
    expect(rows).toStrictEqual([
      { endpoint_id: 'all', event_type: 'issuance.notification' },
      { endpoint_id: 'results', event_type: 'presentation.result' },
    ])
    // The other tenant's repository sees none of them.
    const page = await createWebhookDeliveryRepository(database.db, other).list('results', { limit: 10 })
    expect(page).toStrictEqual({ items: [], nextCursor: null })
  })

  it('a claimed row is leased: nobody else gets it until the lease ends, then it comes back (crashed pod); the late outcome is fenced off', async () => {
    const tenant = await setUp(database.db)
    const now = FUTURE + 1000 * ++serial * 1000
    await enqueue(database.db, tenant, 'all', 'presentation.result', new Date(now - 1))
    const mine = <R extends { tenantId: string }>(rows: R[]) => rows.filter((row) => row.tenantId === tenant)

    const [first] = mine(await claim(database.db, now))
    expect(first).toMatchObject({
      status: 'delivering',
      attempts: 1,
      nextAttemptAt: new Date(now + LEASE_MS),
    })
    expect(mine(await claim(database.db, now + LEASE_MS - 1))).toStrictEqual([])

    // The claiming pod died: once the lease is over the row is claimed again, as attempt 2.
    const [again] = mine(await claim(database.db, now + LEASE_MS))
    expect(again).toMatchObject({ id: first?.id, status: 'delivering', attempts: 2 })
    // The first pod's outcome arrives late: it no longer counts.
    const at = new Date(now + LEASE_MS + 10)
    expect(await finishWebhookDelivery(database.db, first as never, { status: 'delivered', at })).toBe(false)
    expect(
      await finishWebhookDelivery(database.db, again as never, {
        status: 'pending',
        at,
        error: 'HTTP 503',
        nextAttemptAt: new Date(now + LEASE_MS + 1000),
      }),
    ).toBe(true)
    const row = await createWebhookDeliveryRepository(database.db, tenant).get('all', again?.id as string)
    expect(row).toMatchObject({ status: 'pending', attempts: 2, lastError: 'HTTP 503' })
    // Not due before its retry time.
    expect(mine(await claim(database.db, now + LEASE_MS + 999))).toStrictEqual([])
    expect(mine(await claim(database.db, now + LEASE_MS + 1000))).toHaveLength(1)
  })
})

describe.runIf(testDatabases().some((d) => d.name === 'postgres'))(
  'webhook outbox claims across connections on PostgreSQL',
  () => {
    const postgres = testDatabases().find((d) => d.name === 'postgres') as TestDatabase
    let a: DatabaseHandle
    let b: DatabaseHandle
    beforeAll(async () => {
      a = await postgres.open()
      b = await postgres.open()
    })
    afterAll(async () => {
      await dropTenants(a.db)
      await a.close()
      await b.close()
    })

    it('FOR UPDATE SKIP LOCKED: rows locked by one drainer are skipped by the other, not waited for', async () => {
      const tenant = await setUp(a.db)
      const now = FUTURE + 1000 * ++serial * 1000
      // Rows earlier tests left due at this time would fill A's claim of 3: lease them away first.
      for (let left = 1; left > 0; ) left = (await claim(a.db, now)).length
      for (let i = 0; i < 5; i++) await enqueue(a.db, tenant, 'all', 'presentation.result', new Date(now - 1))
      const mine = (rows: { tenantId: string; id: string }[]) => rows.filter((row) => row.tenantId === tenant)
      await a.db.transaction(async (tx) => {
        const first = mine(
          await claimDueWebhookDeliveries(tx, {
            now: new Date(now),
            leaseUntil: new Date(now + LEASE_MS),
            limit: 3,
          }),
        )
        expect(first).toHaveLength(3)
        // A's transaction is open and holds its three rows: B gets the other two at once.
        const started = Date.now()
        const second = mine(await claim(b.db, now))
        expect(Date.now() - started).toBeLessThan(2000)
        expect(second).toHaveLength(2)
        expect(new Set([...first, ...second].map((row) => row.id)).size).toBe(5)
      })
      expect(mine(await claim(b.db, now))).toStrictEqual([])
    })

    it('two drainers claiming at once never get the same row', async () => {
      const tenant = await setUp(a.db)
      const now = FUTURE + 1000 * ++serial * 1000
      for (let i = 0; i < 30; i++)
        await enqueue(a.db, tenant, 'all', 'presentation.result', new Date(now - 1))
      const ids: string[] = []
      for (let round = 0; round < 20 && ids.length < 30; round++) {
        const claims = await Promise.all(
          Array.from({ length: 10 }, (_, i) => claim(i % 2 ? a.db : b.db, now, 2)),
        )
        ids.push(
          ...claims
            .flat()
            .filter((row) => row.tenantId === tenant)
            .map((row) => row.id),
        )
      }
      expect(ids).toHaveLength(30)
      expect(new Set(ids).size).toBe(30)
    })
  },
)
