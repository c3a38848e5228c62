import type { Role } from '@credential-service/core-domain'
import { deriveManagementSigningKey } from '@credential-service/crypto'
import { createIssuanceSessionRepository } from '@credential-service/db-schema'
import { queryRows, testDatabases } from '@credential-service/db-schema/testing'
import { createServer } from '@credential-service/server-kit'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applySessionRetention, buildManagementApp } from '../src/app'
import { createHarness, type Harness, type TestClient } from './harness'

const DAY = 24 * 60 * 60 * 1000

// Issue 14: the retention job. The clock is injected: sessions are created "days ago" by moving
// it back, and the job runs at the real time, so nothing sleeps and no other suite's sessions (all
// younger than the retention) are touched on a shared PostgreSQL database.
describe.each(testDatabases())('session retention on $name', (testDatabase) => {
  let h: Harness
  let offset = 0
  const now = () => new Date(Date.now() + offset)
  let clientA: TestClient
  let clientB: TestClient

  /** Runs `create` with the clock `daysAgo` days back, with tokens from that time. */
  async function back<T>(daysAgo: number, create: (auth: { a: object; b: object }) => Promise<T>) {
    offset = -daysAgo * DAY
    try {
      const token = async (client: TestClient) => ({
        authorization: `Bearer ${await h.tokenFor(client.clientId, client.clientSecret)}`,
      })
      return await create({ a: await token(clientA), b: await token(clientB) })
    } finally {
      offset = 0
    }
  }

  const offer = async (auth: object, lifetimeSeconds = 600) => {
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/offers',
      headers: auth as Record<string, string>,
      payload: {
        credentialConfigurationIds: ['pid'],
        claims: { pid: { given_name: 'Erika' } },
        lifetimeSeconds,
      },
    })
    expect(response.statusCode, response.body).toBe(201)
    return response.json().sessionId as string
  }
  const request = async (auth: object) => {
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/presentation-requests',
      headers: auth as Record<string, string>,
      payload: { presentationConfigId: 'ask' },
    })
    expect(response.statusCode, response.body).toBe(201)
    return response.json().sessionId as string
  }
  const status = async (id: string, client: TestClient) => {
    const response = await h.app.inject({ url: `/api/sessions/${id}`, headers: client.auth })
    return response.statusCode === 200 ? (response.json().status as string) : response.statusCode
  }
  /** The row's claims, decrypted (null: none stored), and its encrypted offer code. */
  const stored = async (tenantId: string, id: string) => {
    const [row] = await queryRows<{ sealed: string | null; clear: unknown; code: string | null }>(
      h.database.db,
      sql`select claims_encrypted as sealed, claims as clear, offer_code_encrypted as code from issuance_sessions where tenant_id = ${tenantId} and id = ${id}`,
    )
    if (!row) return undefined
    expect(row.clear).toBeNull()
    return { claims: row.sealed && h.keys.sessionData.openClaims(tenantId, id, row.sealed), code: row.code }
  }
  const retention = (options: { retentionDays: number; batchSize?: number }) =>
    applySessionRetention({ db: h.database.db, sessionData: h.keys.sessionData, now, ...options })

  beforeAll(async () => {
    h = await createHarness(testDatabase, { now })
    const roles: Role[] = [
      'issuance:offer',
      'issuance:config',
      'presentation:request',
      'presentation:config',
      'key:manage',
    ]
    clientA = await h.createClient(h.tenantA, roles)
    clientB = await h.createClient(h.tenantB, roles)
    for (const client of [clientA, clientB]) {
      const post = async (url: string, payload: object) => {
        const response = await h.app.inject({ method: 'POST', url, headers: client.auth, payload })
        expect(response.statusCode, response.body).toBe(201)
      }
      await post('/api/key-chains', {
        source: 'generate',
        id: 'keys',
        certificate: { mode: 'internal-ca', subject: 'CN=Retention,C=DE' },
      })
      await post('/api/credentials', {
        id: 'pid',
        config: { format: 'dc+sd-jwt', vct: 'urn:example:pid' },
        keyChainId: 'keys',
        fields: [{ path: ['given_name'], type: 'string', mandatory: true, disclosable: true }],
      })
      await post('/api/presentations', {
        id: 'ask',
        keyChainId: 'keys',
        dcqlQuery: {
          credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:example:pid'] } }],
        },
      })
    }
  }, 120_000)
  afterAll(() => h.close())

  it('issue 14: an offer nobody redeemed loses its claims and offer code at expiry; the session stays', async () => {
    const expired = await back(1, ({ a }) => offer(a, 60))
    const open = await offer(clientA.auth)
    expect((await stored(h.tenantA, expired))?.claims).toStrictEqual({ pid: { given_name: 'Erika' } })

    const run = await retention({ retentionDays: 30 })
    expect(run.claimsDropped).toBeGreaterThanOrEqual(1)
    expect(await stored(h.tenantA, expired)).toStrictEqual({ claims: null, code: null })
    expect(await status(expired, clientA)).toBe('expired')
    // An open offer keeps what the wallet will need.
    expect((await stored(h.tenantA, open))?.claims).toStrictEqual({ pid: { given_name: 'Erika' } })
    expect((await stored(h.tenantA, open))?.code).not.toBeNull()
  })

  it('issue 14: sessions of every tenant go SESSION_RETENTION_DAYS after their expiry, with their notifications; younger ones stay; 0 keeps all', async () => {
    const old = await back(40, async ({ a, b }) => ({
      offer: await offer(a),
      request: await request(a),
      completed: await offer(a),
      ofB: await offer(b),
    }))
    // A completed issuance with its wallet notification, as the token and credential endpoints
    // record it (only a redeemed offer can issue).
    await queryRows(
      h.database.db,
      sql`update issuance_sessions set status = 'token_issued' where tenant_id = ${h.tenantA} and id = ${old.completed}`,
    )
    await createIssuanceSessionRepository(h.database.db, h.tenantA).recordIssued(
      old.completed,
      'pid',
      `ntf_${crypto.randomUUID()}`,
      new Date(Date.now() - 40 * DAY),
    )
    const young = await back(29, async ({ a }) => ({ offer: await offer(a), request: await request(a) }))
    const notifications = async () =>
      (
        await queryRows<{ n: number }>(
          h.database.db,
          sql`select count(*)::int as n from issuance_notifications where tenant_id = ${h.tenantA} and session_id = ${old.completed}`,
        )
      )[0]?.n
    expect(await notifications()).toBe(1)
    expect(await status(old.completed, clientA)).toBe('completed')

    // SESSION_RETENTION_DAYS=0: nothing is deleted.
    const kept = await retention({ retentionDays: 0 })
    expect(kept.deleted).toStrictEqual({ issuance: 0, presentation: 0, webhookDeliveries: 0 })
    expect(await status(old.offer, clientA)).toBe('expired')

    // Batches of 1: the run goes on until nothing old is left.
    const run = await retention({ retentionDays: 30, batchSize: 1 })
    expect(run.deleted.issuance).toBeGreaterThanOrEqual(3)
    expect(run.deleted.presentation).toBeGreaterThanOrEqual(1)
    for (const id of [old.offer, old.request, old.completed]) expect(await status(id, clientA)).toBe(404)
    expect(await status(old.ofB, clientB)).toBe(404)
    expect(await notifications()).toBe(0)
    expect(await status(young.offer, clientA)).toBe('expired')
    expect(await status(young.request, clientA)).toBe('expired')
  })

  it('webhook outbox: delivered and failed deliveries go SESSION_RETENTION_DAYS after their last change; pending and younger ones stay', async () => {
    const db = h.database.db
    await db.execute(
      sql`insert into webhook_endpoints (tenant_id, id, url, auth_type) values (${h.tenantA}, 'old-hook', 'https://hooks.example.com/in', 'none')`,
    )
    const row = (id: string, status: string, daysAgo: number) => {
      const at = new Date(Date.now() - daysAgo * DAY).toISOString()
      return sql`(${h.tenantA}, ${id}, 'old-hook', 'presentation.result', 'ses_x', 'v1.x', ${status}, 1, ${at}::timestamptz, ${at}::timestamptz, ${at}::timestamptz)`
    }
    await db.execute(sql`
      insert into webhook_deliveries (tenant_id, id, endpoint_id, event_type, session_id, payload_encrypted,
        status, attempts, next_attempt_at, created_at, updated_at)
      values ${sql.join(
        [
          row('whd_olddelivered', 'delivered', 40),
          row('whd_oldfailed', 'failed', 31),
          row('whd_oldpending', 'pending', 40),
          row('whd_youngdelivered', 'delivered', 29),
        ],
        sql`, `,
      )}`)
    const left = async () =>
      (
        await queryRows<{ id: string }>(
          db,
          sql`select id from webhook_deliveries where tenant_id = ${h.tenantA} and endpoint_id = 'old-hook' order by id`,
        )
      ).map((r) => r.id)

    expect((await retention({ retentionDays: 0 })).deleted.webhookDeliveries).toBe(0)
    expect(await left()).toHaveLength(4)
    const run = await retention({ retentionDays: 30, batchSize: 1 })
    expect(run.deleted.webhookDeliveries).toBeGreaterThanOrEqual(2)
    expect(await left()).toStrictEqual(['whd_oldpending', 'whd_youngdelivered'])
  })

  it('issue 14: a running management process applies the retention on its schedule', async () => {
    const old = await back(31, ({ a }) => offer(a))
    expect(await status(old, clientA)).toBe('expired')
    // A second management process on the same database, its job every 50 ms.
    const pod = await createServer({
      logLevel: 'silent',
      ping: h.database.ping,
      apps: [
        buildManagementApp({
          config: h.config,
          database: h.database,
          signingKey: await deriveManagementSigningKey(h.config.MASTER_SECRET),
          keys: h.keys,
          now,
          sessionRetentionSeconds: 0.05,
        }),
      ],
    })
    try {
      await pod.ready()
      let seen: string | number = 'expired'
      for (let i = 0; i < 100 && seen !== 404; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        seen = await status(old, clientA)
      }
      expect(seen).toBe(404)
    } finally {
      await pod.close()
    }
  })
})
