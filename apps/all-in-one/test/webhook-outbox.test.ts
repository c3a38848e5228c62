import { createHmac } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDatabase } from '@credential-service/db-schema/client'
import { queryRows, type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import type { WorldTenantHandle } from '@credential-service/management/testing'
import { sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type AllInOne,
  bearer,
  type ReceivedCall,
  startAllInOne,
  startAllInOneWorld,
  startReceiver,
  webhookEvent,
} from './harness'
import { answer, issue, requestPresentation, setUpTenant } from './session-fixtures'

const PUBLIC_URL = 'https://credentials.example.com'
const LOCAL = { OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' }
type Headers = Record<string, string>
// biome-ignore lint/suspicious/noExplicitAny: API answers are read loosely in tests
type Loose = Record<string, any>

/** Polls `read` until `done` holds (at most ~20 s on a loaded machine); returns the last value. */
async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read()
  for (let i = 0; i < 200 && !done(value); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    value = await read()
  }
  return value
}

/** An endpoint for presentation results only (unless `payload` says otherwise): one call per session. */
async function createHook(app: FastifyInstance, auth: Headers, payload: object) {
  const response = await app.inject({
    method: 'POST',
    url: '/api/webhook-endpoints',
    headers: auth,
    payload: { events: ['presentation.result'], ...payload },
  })
  expect(response.statusCode, response.body).toBe(201)
  return response.json() as Loose
}

/** A cross-device presentation answered by a wallet: the result (with claims) goes to `endpointId`. */
async function verifiedPresentation(app: FastifyInstance, auth: Headers, endpointId: string) {
  const presentation = await requestPresentation(app, auth, { webhookEndpointId: endpointId })
  const response = await answer(app, presentation, await issue(app, auth))
  expect(response.statusCode, response.body).toBe(200)
  return presentation.created.sessionId as string
}

const deliveriesOf = async (app: FastifyInstance, auth: Headers, endpointId: string, query = '') =>
  (await app.inject({ url: `/api/webhook-endpoints/${endpointId}/deliveries${query}`, headers: auth })).json()
    .items as Loose[]

describe.each(testDatabases())('webhook outbox over HTTP on $name', (testDatabase) => {
  let started: AllInOne
  let app: FastifyInstance
  let rp: WorldTenantHandle
  let other: WorldTenantHandle
  let scraper: Headers
  let rpId = ''

  beforeAll(async () => {
    const world = await startAllInOneWorld(testDatabase, 'presentation', PUBLIC_URL, {
      ...LOCAL,
      WEBHOOK_MAX_ATTEMPTS: '2',
      WEBHOOK_BACKOFF_MS: '50',
    })
    started = world
    app = started.app
    await app.ready()
    const root = world.root
    rp = world.tenants.a
    rpId = rp.id
    other = world.tenants.b
    const client = (
      await app.inject({
        method: 'POST',
        url: '/api/clients',
        headers: root,
        payload: { roles: ['tenant:manage', 'metrics:read'] },
      })
    ).json()
    scraper = await bearer(app, client.clientId, client.clientSecret)
  }, 120_000)
  afterAll(() => app.close())

  it('an event is stored encrypted and delivered once, signed, with its deliveryId; the list shows it delivered', async () => {
    const receiver = await startReceiver()
    try {
      const hook = await createHook(app, rp.auth, {
        id: 'delivered',
        url: `${receiver.url}/in`,
        auth: { type: 'hmac' },
      })
      const sessionId = await verifiedPresentation(app, rp.auth, 'delivered')
      const [item] = await waitFor(
        () => deliveriesOf(app, rp.auth, 'delivered'),
        (items) => items[0]?.status === 'delivered',
      )
      expect(item).toStrictEqual({
        id: expect.stringMatching(/^whd_/),
        webhookEndpointId: 'delivered',
        eventType: 'presentation.result',
        sessionId,
        status: 'delivered',
        attempts: 1,
        nextAttemptAt: null,
        lastError: null,
        replayable: true,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        deliveredAt: expect.any(String),
      })
      expect(receiver.received).toHaveLength(1)
      const call = receiver.received[0] as ReceivedCall
      expect(webhookEvent(call)).toStrictEqual({
        type: 'presentation.result',
        tenantId: rpId,
        sessionId,
        presentationConfigId: 'ask',
        status: 'verified',
        claims: { pid: [expect.objectContaining({ age_over_18: true })] },
        deliveryId: item?.id,
      })
      const signature = createHmac('sha256', hook.signingSecret)
        .update(`${call.headers['x-timestamp']}.${call.body}`)
        .digest('hex')
      expect(call.headers['x-signature']).toBe(`sha256=${signature}`)
      // The disclosed claims are not readable in the outbox table.
      const [stored] = await queryRows<{ payload: string }>(
        started.database.db,
        sql`select payload_encrypted as payload from webhook_deliveries where tenant_id = ${rpId} and id = ${item?.id}`,
      )
      expect(stored?.payload).toMatch(/^v1\./)
      expect(stored?.payload).not.toContain('age_over_18')
      const session = (await app.inject({ url: `/api/sessions/${sessionId}`, headers: rp.auth })).json()
      expect(session.delivery).toStrictEqual({ status: 'delivered', attempts: 1, error: null })
    } finally {
      receiver.close()
    }
  })

  it('issue 21: a failed presentation (a wallet error) is sent as presentation.result with its reason', async () => {
    const receiver = await startReceiver()
    try {
      await createHook(app, rp.auth, { id: 'failures', url: `${receiver.url}/in` })
      const presentation = await requestPresentation(app, rp.auth, { webhookEndpointId: 'failures' })
      const response = await app.inject({
        method: 'POST',
        url: new URL(presentation.created.requestUri).pathname.replace('/requests/', '/responses/'),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          error: 'access_denied',
          state: presentation.request.state,
        }).toString(),
      })
      expect(response.statusCode, response.body).toBe(200)
      await waitFor(
        async () => receiver.received.length,
        (count) => count > 0,
      )
      expect(webhookEvent(receiver.received[0])).toStrictEqual({
        type: 'presentation.result',
        tenantId: rpId,
        sessionId: presentation.created.sessionId,
        presentationConfigId: 'ask',
        status: 'failed',
        failureReason: 'wallet error: access_denied',
        deliveryId: expect.stringMatching(/^whd_/),
      })
    } finally {
      receiver.close()
    }
  })

  it('receiver down: the delivery fails after WEBHOOK_MAX_ATTEMPTS; receiver up, a replay delivers the same event and is audited', async () => {
    let up = false
    const receiver = await startReceiver(() => (up ? 204 : 503))
    try {
      await createHook(app, rp.auth, { id: 'flaky', url: `${receiver.url}/in` })
      const sessionId = await verifiedPresentation(app, rp.auth, 'flaky')
      const [failed] = await waitFor(
        () => deliveriesOf(app, rp.auth, 'flaky'),
        (items) => items[0]?.status === 'failed',
      )
      expect(failed).toMatchObject({
        status: 'failed',
        attempts: 2,
        lastError: 'HTTP 503',
        nextAttemptAt: null,
      })
      expect(receiver.received).toHaveLength(2)
      // Issue 14 metrics: each attempt's outcome per tenant, and the outbox backlog by state.
      const metrics = (await app.inject({ url: '/api/metrics', headers: scraper })).body
      const attempts = 'credential_service_webhook_deliveries_total'
      expect(metrics).toContain(`${attempts}{tenant="${rpId}",outcome="retrying"} 1\n`)
      expect(metrics).toContain(`${attempts}{tenant="${rpId}",outcome="failed"} 1\n`)
      expect(metrics).toMatch(/^credential_service_webhook_outbox_deliveries\{state="failed"\} [1-9]\d*$/m)
      expect(
        (await app.inject({ url: `/api/sessions/${sessionId}`, headers: rp.auth })).json().delivery,
      ).toStrictEqual({ status: 'failed', attempts: 2, error: 'HTTP 503' })
      expect(await deliveriesOf(app, rp.auth, 'flaky', '?status=failed')).toHaveLength(1)
      expect(await deliveriesOf(app, rp.auth, 'flaky', '?status=delivered')).toHaveLength(0)

      up = true
      const replay = await app.inject({
        method: 'POST',
        url: `/api/webhook-endpoints/flaky/deliveries/${failed?.id}/replay`,
        headers: rp.auth,
      })
      expect(replay.statusCode, replay.body).toBe(202)
      expect(replay.json()).toMatchObject({ id: failed?.id, status: 'pending', attempts: 0 })
      const delivered = await waitFor(
        async () =>
          (
            await app.inject({
              url: `/api/webhook-endpoints/flaky/deliveries/${failed?.id}`,
              headers: rp.auth,
            })
          ).json(),
        (delivery) => delivery.status === 'delivered',
      )
      expect(delivered).toMatchObject({ status: 'delivered', attempts: 1, lastError: null })
      expect(receiver.received).toHaveLength(3)
      // The same event, byte for byte: the receiver can tell the repeat by its deliveryId.
      expect(receiver.received[2]?.body).toBe(receiver.received[0]?.body)
      expect(webhookEvent(receiver.received[2]).deliveryId).toBe(failed?.id)

      // Replay of every failed delivery of the endpoint.
      up = false
      await verifiedPresentation(app, rp.auth, 'flaky')
      await waitFor(
        () => deliveriesOf(app, rp.auth, 'flaky', '?status=failed'),
        (items) => items.length === 1,
      )
      up = true
      const all = await app.inject({
        method: 'POST',
        url: '/api/webhook-endpoints/flaky/deliveries/replay-failed',
        headers: rp.auth,
      })
      expect(all.statusCode, all.body).toBe(202)
      expect(all.json()).toStrictEqual({ replayed: 1 })
      const items = await waitFor(
        () => deliveriesOf(app, rp.auth, 'flaky'),
        (list) => list.every((item) => item.status === 'delivered'),
      )
      expect(items.map((item) => item.status)).toStrictEqual(['delivered', 'delivered'])

      // A replay sends the event out again: each is audited with who asked for it.
      const audit = await app.inject({
        url: `/api/audit-events?tenantId=${rpId}&action=replay`,
        headers: scraper,
      })
      expect(audit.statusCode, audit.body).toBe(200)
      expect(
        audit
          .json()
          .items.map((event: Record<string, unknown>) => [
            event.actorClientId,
            event.resourceType,
            event.resourceId,
          ]),
      ).toStrictEqual([
        [rp.clientId, 'webhook-delivery', 'flaky/failed'],
        [rp.clientId, 'webhook-delivery', failed?.id],
      ])
    } finally {
      receiver.close()
    }
  })

  it('the endpoint’s events filter: an event type it does not subscribe to is never stored or sent', async () => {
    const receiver = await startReceiver()
    try {
      const payload = { id: 'picky', url: `${receiver.url}/in`, events: ['issuance.notification'] }
      await createHook(app, rp.auth, payload)
      const skipped = await verifiedPresentation(app, rp.auth, 'picky')
      // Subscribed now: the next result goes out, so the pipeline works and only the filter held it back.
      const put = await app.inject({
        method: 'PUT',
        url: '/api/webhook-endpoints/picky',
        headers: rp.auth,
        payload: { ...payload, events: ['presentation.result'] },
      })
      expect(put.statusCode, put.body).toBe(200)
      const sent = await verifiedPresentation(app, rp.auth, 'picky')
      const items = await waitFor(
        () => deliveriesOf(app, rp.auth, 'picky'),
        (list) => list[0]?.status === 'delivered',
      )
      expect(items.map((item) => item.sessionId)).toStrictEqual([sent])
      expect(receiver.received.map((call) => JSON.parse(call.body).sessionId)).toStrictEqual([sent])
      const session = (await app.inject({ url: `/api/sessions/${skipped}`, headers: rp.auth })).json()
      expect(session.delivery).toStrictEqual({ status: 'none', attempts: 0, error: null })
    } finally {
      receiver.close()
    }
  })

  it("tenant isolation: another tenant's delivery is a 404 to list, read and replay, even through an endpoint of the same id", async () => {
    const receiver = await startReceiver(() => 503)
    try {
      await createHook(app, rp.auth, { id: 'shared-name', url: `${receiver.url}/in` })
      await createHook(app, other.auth, { id: 'shared-name', url: `${receiver.url}/other` })
      await verifiedPresentation(app, rp.auth, 'shared-name')
      const [delivery] = await waitFor(
        () => deliveriesOf(app, rp.auth, 'shared-name'),
        (items) => items[0]?.status === 'failed',
      )
      const base = '/api/webhook-endpoints/shared-name/deliveries'
      expect(await deliveriesOf(app, other.auth, 'shared-name')).toStrictEqual([])
      const read = await app.inject({ url: `${base}/${delivery?.id}`, headers: other.auth })
      expect(read.statusCode).toBe(404)
      expect(read.json().code).toBe('not_found')
      const replay = await app.inject({
        method: 'POST',
        url: `${base}/${delivery?.id}/replay`,
        headers: other.auth,
      })
      expect(replay.statusCode).toBe(404)
      const all = await app.inject({ method: 'POST', url: `${base}/replay-failed`, headers: other.auth })
      expect(all.json()).toStrictEqual({ replayed: 0 })
      // The path tenant is checked against the token's tenant as everywhere.
      const cross = await app.inject({
        url: `/api/tenants/${rpId}/webhook-endpoints/shared-name/deliveries`,
        headers: other.auth,
      })
      expect(cross.statusCode).toBe(404)
      // An endpoint the tenant does not have is a 404, not an empty list.
      const missing = await app.inject({ url: '/api/webhook-endpoints/nope/deliveries', headers: rp.auth })
      expect(missing.statusCode).toBe(404)
      // rp's delivery is untouched: still failed, not queued again by the other tenant's calls.
      expect((await app.inject({ url: `${base}/${delivery?.id}`, headers: rp.auth })).json()).toMatchObject({
        status: 'failed',
        attempts: 2,
      })
    } finally {
      receiver.close()
    }
  })

  it('drop-after-delivery: the body leaves the outbox once delivered, and such a delivery cannot be replayed (409)', async () => {
    const receiver = await startReceiver()
    const root = await bearer(app, started.rootClientId, started.rootSecret)
    try {
      await createHook(app, rp.auth, { id: 'dropping', url: `${receiver.url}/in` })
      const patch = (presentationRetention: string) =>
        app.inject({
          method: 'PATCH',
          url: `/api/tenants/${rpId}`,
          headers: root,
          payload: { presentationRetention },
        })
      expect((await patch('drop-after-delivery')).statusCode).toBe(200)
      const sessionId = await verifiedPresentation(app, rp.auth, 'dropping')
      const [item] = await waitFor(
        () => deliveriesOf(app, rp.auth, 'dropping'),
        (items) => items[0]?.status === 'delivered',
      )
      expect(item).toMatchObject({ status: 'delivered', replayable: false })
      expect(
        (await app.inject({ url: `/api/sessions/${sessionId}`, headers: rp.auth })).json().claims,
      ).toBeNull()
      const replay = await app.inject({
        method: 'POST',
        url: `/api/webhook-endpoints/dropping/deliveries/${item?.id}/replay`,
        headers: rp.auth,
      })
      expect(replay.statusCode).toBe(409)
      expect(replay.json().code).toBe('conflict')
      await patch('keep')
    } finally {
      receiver.close()
    }
  })
})

describe.each(testDatabases())('webhook outbox across a restart on $name', (testDatabase) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'outbox-'))
  // PGlite in a folder, so that a second process finds what the first stored.
  const database: TestDatabase =
    testDatabase.name === 'pglite'
      ? {
          name: 'pglite',
          open: async () => {
            const handle = await createDatabase({ dataDir })
            await handle.migrate()
            return handle
          },
        }
      : testDatabase
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it('a delivery pending when the app stops is delivered by the next app on the same database', async () => {
    let up = false
    const receiver = await startReceiver(() => (up ? 204 : 503))
    const tenantId = `restart-${crypto.randomUUID().slice(0, 8)}`
    const env = { ...LOCAL, WEBHOOK_MAX_ATTEMPTS: '5', WEBHOOK_BACKOFF_MS: '1500', WEBHOOK_POLL_SECONDS: '1' }
    const first = await startAllInOne(database, PUBLIC_URL, env)
    let second: AllInOne | undefined
    try {
      await first.app.ready()
      const rp = await setUpTenant(
        first.app,
        await bearer(first.app, first.rootClientId, first.rootSecret),
        tenantId,
      )
      await createHook(first.app, rp.auth, { id: 'later', url: `${receiver.url}/in` })
      await verifiedPresentation(first.app, rp.auth, 'later')
      const [pending] = await waitFor(
        () => deliveriesOf(first.app, rp.auth, 'later'),
        (items) => items[0]?.attempts === 1 && items[0]?.status === 'pending',
      )
      expect(pending).toMatchObject({ status: 'pending', attempts: 1, lastError: 'HTTP 503' })
      await first.app.close()

      up = true
      second = await startAllInOne(database, PUBLIC_URL, env)
      await second.app.ready()
      const app = second.app
      const delivered = await waitFor(
        async () =>
          (
            await app.inject({
              url: `/api/webhook-endpoints/later/deliveries/${pending?.id}`,
              headers: rp.auth,
            })
          ).json(),
        (delivery) => delivery.status === 'delivered',
      )
      expect(delivered).toMatchObject({ status: 'delivered', attempts: 2 })
      expect(receiver.received).toHaveLength(2)
      expect(JSON.parse(receiver.received[1]?.body as string).deliveryId).toBe(pending?.id)
    } finally {
      receiver.close()
      await first.app.close()
      await second?.app.close()
    }
  }, 120_000)
})
