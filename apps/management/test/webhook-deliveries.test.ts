import { enqueueWebhookDelivery } from '@credential-service/db-schema'
import { bearer, startWorld, type World } from '@credential-service/management/testing'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const PROBLEM = /^application\/problem\+json/
// Stored rows are due in 2100: no outbox drains them while a test looks at them.
const FUTURE = new Date(Date.UTC(2100, 0, 1))
// A replay kicks the app's outbox, which drains every due row of the database. Files share a
// PostgreSQL database: an hour behind, this app's outbox never takes the rows other files' apps
// are about to deliver (it sees them due only an hour later).
const BEHIND_MS = 3_600_000
const now = () => new Date(Date.now() - BEHIND_MS)
type Headers = Record<string, string>
type Status = 'pending' | 'delivering' | 'delivered' | 'failed'

// routes/webhook-deliveries.ts: the outbox rows of a webhook endpoint, over the `mgmt-webhooks`
// world (each tenant has the endpoint `hooks`, an `admin` with presentation:config and a
// `requester` without a config role). Rows are stored as the outbox stores them, in the states a
// delivery reaches; sending them is checked by apps/all-in-one/test/webhook-outbox.test.ts.
describe('management webhook deliveries', () => {
  let world: World
  let requester: Headers
  let serial = 0

  /** A delivery of `tenant`'s endpoint `hooks` in `status` (`kept`: whether its body is still stored). */
  async function delivery(status: Status = 'pending', tenant: 'a' | 'b' = 'a', kept = true) {
    const tenantId = world.tenants[tenant].id
    const id = `whd_test${++serial}${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
    const stored = await enqueueWebhookDelivery(world.database.db, {
      tenantId,
      id,
      endpointId: 'hooks',
      eventType: 'presentation.result',
      sessionId: `ses_test${serial}`,
      payloadEncrypted: 'v1.not.a.body',
      at: FUTURE,
    })
    expect(stored).toBe(true)
    await world.database.db.execute(sql`
      update webhook_deliveries set status = ${status}, attempts = ${status === 'pending' ? 0 : 3},
        last_error = ${status === 'failed' ? 'HTTP 500' : null},
        payload_encrypted = ${kept ? 'v1.not.a.body' : null}
      where tenant_id = ${tenantId} and id = ${id}`)
    return id
  }
  const base = (tenant: 'a' | 'b' = 'a') =>
    `/api/tenants/${world.tenants[tenant].id}/webhook-endpoints/hooks/deliveries`
  const get = (url: string, headers: Headers = world.tenants.a.auth) => world.app.inject({ url, headers })
  const post = (url: string, headers: Headers = world.tenants.a.auth) =>
    world.app.inject({ method: 'POST', url, headers })

  beforeAll(async () => {
    world = await startWorld('mgmt-webhooks', { now })
    const { clientId, clientSecret } = world.tenants.a.clients.requester as {
      clientId: string
      clientSecret: string
    }
    requester = await bearer(world.app, clientId, clientSecret)
  })
  afterAll(() => world.close())

  describe('happy', () => {
    it('lists an endpoint’s deliveries newest first, by status, under either mount, without bodies', async () => {
      const older = await delivery('failed')
      const newer = await delivery('pending')
      const page = await get('/api/webhook-endpoints/hooks/deliveries?limit=100')
      expect(page.statusCode, page.body).toBe(200)
      const ids = page.json().items.map((item: { id: string }) => item.id)
      expect(ids.indexOf(newer)).toBeLessThan(ids.indexOf(older))
      expect(ids.indexOf(older)).toBeGreaterThanOrEqual(0)
      expect(page.body).not.toContain('v1.not.a.body')
      const failed = await get(`${base()}?status=failed&limit=100`)
      expect(failed.statusCode, failed.body).toBe(200)
      const statuses = failed.json().items.map((item: { status: string }) => item.status)
      expect(new Set(statuses)).toStrictEqual(new Set(['failed']))
      expect(failed.json().items.map((item: { id: string }) => item.id)).toContain(older)
      const first = await get('/api/webhook-endpoints/hooks/deliveries?limit=1')
      expect(first.json().items).toHaveLength(1)
      expect(first.json().nextCursor).toEqual(expect.any(String))
    })

    it('reads one delivery with its attempts and last error', async () => {
      const id = await delivery('failed')
      const response = await get(`/api/webhook-endpoints/hooks/deliveries/${id}`)
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json()).toStrictEqual({
        id,
        webhookEndpointId: 'hooks',
        eventType: 'presentation.result',
        sessionId: expect.stringMatching(/^ses_test/),
        status: 'failed',
        attempts: 3,
        nextAttemptAt: null,
        lastError: 'HTTP 500',
        replayable: true,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        deliveredAt: null,
      })
    })

    it('replays a failed or delivered delivery: 202, pending, due now, attempts counted afresh', async () => {
      for (const status of ['failed', 'delivered'] as const) {
        const id = await delivery(status)
        const before = now().getTime()
        const replayed = await post(`${base()}/${id}/replay`)
        expect(replayed.statusCode, replayed.body).toBe(202)
        expect(replayed.json()).toMatchObject({ id, status: 'pending', attempts: 0, deliveredAt: null })
        expect(Date.parse(replayed.json().nextAttemptAt)).toBeGreaterThanOrEqual(before - 1000)
        expect(Date.parse(replayed.json().nextAttemptAt)).toBeLessThanOrEqual(now().getTime())
      }
    })

    it('replays every failed delivery of the endpoint, and only those', async () => {
      const failed = [await delivery('failed'), await delivery('failed')]
      const pending = await delivery('pending')
      const dropped = await delivery('failed', 'a', false)
      const response = await post('/api/webhook-endpoints/hooks/deliveries/replay-failed')
      expect(response.statusCode, response.body).toBe(202)
      expect(response.json().replayed).toBeGreaterThanOrEqual(failed.length)
      for (const id of failed) expect((await get(`${base()}/${id}`)).json().status).not.toBe('failed')
      expect((await get(`${base()}/${pending}`)).json()).toMatchObject({ status: 'pending', attempts: 0 })
      expect((await get(`${base()}/${dropped}`)).json()).toMatchObject({
        status: 'failed',
        replayable: false,
      })
    })
  })

  describe('error', () => {
    it('RFC 9457: a malformed delivery id or an unknown status filter is a 400 naming it', async () => {
      const badId = await get('/api/webhook-endpoints/hooks/deliveries/not-a-delivery')
      expect(badId.statusCode).toBe(400)
      expect(badId.headers['content-type']).toMatch(PROBLEM)
      expect(badId.json()).toMatchObject({
        code: 'invalid_input',
        errors: [expect.objectContaining({ path: 'params.deliveryId' })],
      })
      const badStatus = await get('/api/webhook-endpoints/hooks/deliveries?status=lost')
      expect(badStatus.statusCode).toBe(400)
      expect(badStatus.json().errors).toContainEqual(expect.objectContaining({ path: 'querystring.status' }))
    })

    it('an unknown endpoint or delivery is 404', async () => {
      for (const response of [
        await get('/api/webhook-endpoints/nope/deliveries'),
        await post('/api/webhook-endpoints/nope/deliveries/replay-failed'),
        await get('/api/webhook-endpoints/hooks/deliveries/whd_unknown0'),
        await post('/api/webhook-endpoints/hooks/deliveries/whd_unknown0/replay'),
      ]) {
        expect(response.statusCode, response.body).toBe(404)
        expect(response.json().code).toBe('not_found')
      }
    })

    it('a delivery under way, or whose body was dropped once delivered, cannot be replayed (409)', async () => {
      for (const id of [await delivery('delivering'), await delivery('delivered', 'a', false)]) {
        const refused = await post(`${base()}/${id}/replay`)
        expect(refused.statusCode, refused.body).toBe(409)
        expect(refused.json().code).toBe('conflict')
      }
    })
  })

  describe('security', () => {
    it('spec §5 rule 4: a client without issuance:config or presentation:config is 403', async () => {
      const id = await delivery('failed')
      for (const response of [
        await get('/api/webhook-endpoints/hooks/deliveries', requester),
        await get(`/api/webhook-endpoints/hooks/deliveries/${id}`, requester),
        await post(`/api/webhook-endpoints/hooks/deliveries/${id}/replay`, requester),
        await post('/api/webhook-endpoints/hooks/deliveries/replay-failed', requester),
      ]) {
        expect(response.statusCode).toBe(403)
        expect(response.json().code).toBe('forbidden')
      }
      expect((await get(`${base()}/${id}`)).json().status).toBe('failed')
    })

    it('S-100: tenant B, whose endpoint has the same id, cannot see or replay tenant A’s deliveries (404); they stay unchanged', async () => {
      const { a, b } = world.tenants
      const id = await delivery('failed')
      const ofB = await delivery('pending', 'b')
      const listOfB = await get('/api/webhook-endpoints/hooks/deliveries?limit=100', b.auth)
      expect(listOfB.statusCode).toBe(200)
      expect(listOfB.json().items.map((item: { id: string }) => item.id)).toStrictEqual([ofB])
      for (const response of [
        await get(`/api/webhook-endpoints/hooks/deliveries/${id}`, b.auth),
        await post(`/api/webhook-endpoints/hooks/deliveries/${id}/replay`, b.auth),
        await get(base('a'), b.auth),
        await post(`${base('a')}/${id}/replay`, b.auth),
        await post(`${base('a')}/replay-failed`, b.auth),
      ])
        expect(response.statusCode, response.body).toBe(404)
      expect(
        (await post('/api/webhook-endpoints/hooks/deliveries/replay-failed', b.auth)).json(),
      ).toStrictEqual({
        replayed: 0,
      })
      expect(
        (await get(`/api/tenants/${a.id}/webhook-endpoints/hooks/deliveries/${id}`)).json(),
      ).toMatchObject({
        status: 'failed',
        attempts: 3,
      })
    })
  })
})
