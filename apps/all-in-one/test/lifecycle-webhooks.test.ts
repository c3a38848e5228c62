import type { WebhookEvent } from '@credential-service/core-domain'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { testDatabases } from '@credential-service/db-schema/testing'
import { sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, type ReceivedCall, startAllInOne, startReceiver, webhookEvent } from './harness'
import { answer, issue, redeem, requestPresentation, setUpTenant } from './session-fixtures'

type Headers = Record<string, string>
// biome-ignore lint/suspicious/noExplicitAny: API answers are read loosely in tests
type Loose = Record<string, any>

const SECRET_CLAIM = 'Lifecycle-Claim-Value-7f3a'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Issue 42 item 1: the issuance and presentation lifecycle in webhooks. Each event is checked
 * against its schema (`webhookEvent`: it parses and names every field sent), and no body carries
 * a claim value. Its own database (PostgreSQL) or embedded one: the expiry sweep and the poll
 * (every second here) act on every tenant's rows.
 */
describe.each(testDatabases({ alone: true, ownPostgres: true }))(
  'issuance and presentation lifecycle webhooks on $name (issue 42 item 1)',
  (testDatabase) => {
    let app: FastifyInstance
    let database: DatabaseHandle
    let auth: Headers
    const receivers = new Map<string, Awaited<ReturnType<typeof startReceiver>>>()
    const allCalls = (): ReceivedCall[] => [...receivers.values()].flatMap((r) => r.received)
    const tenant = `lc-${crypto.randomUUID().slice(0, 8)}`

    /** The events endpoint `id` received so far, parsed with their schemas. */
    const eventsAt = (id: string): WebhookEvent[] =>
      (receivers.get(id)?.received ?? []).map((call) => webhookEvent(call))
    const until = async (check: () => boolean, ms = 15_000) => {
      for (let waited = 0; waited < ms && !check(); waited += 100) await sleep(100)
      expect(check()).toBe(true)
    }
    const endpoint = async (id: string, events?: string[]) => {
      const receiver = await startReceiver()
      receivers.set(id, receiver)
      const created = await app.inject({
        method: 'POST',
        url: '/api/webhook-endpoints',
        headers: auth,
        payload: { id, url: `${receiver.url}/${id}`, ...(events ? { events } : {}) },
      })
      expect(created.statusCode, created.body).toBe(201)
    }
    const pidWith = async (webhookEndpointId: string) => {
      const {
        createdAt: _c,
        updatedAt: _u,
        ...config
      } = (await app.inject({ url: '/api/credentials/pid', headers: auth })).json()
      const put = await app.inject({
        method: 'PUT',
        url: '/api/credentials/pid',
        headers: auth,
        payload: { ...config, webhookEndpointId },
      })
      expect(put.statusCode, put.body).toBe(200)
    }
    const offer = async () => {
      const created = await app.inject({
        method: 'POST',
        url: '/api/offers',
        headers: auth,
        payload: { credentialConfigurationIds: ['pid'], claims: { pid: { given_name: SECRET_CLAIM } } },
      })
      expect(created.statusCode, created.body).toBe(201)
      return created.json() as Loose
    }
    /** Moves a session's expiry into the past, as time passing would. */
    const expire = (table: 'issuance_sessions' | 'presentation_sessions', id: string) =>
      database.db.execute(
        sql`update ${sql.identifier(table)} set expires_at = now() - interval '1 second' where tenant_id = ${tenant} and id = ${id}`,
      )

    beforeAll(async () => {
      const started = await startAllInOne(testDatabase, 'https://credentials.example.com', {
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
        // The expiry sweep runs with the poll.
        WEBHOOK_POLL_SECONDS: '1',
      })
      app = started.app
      database = started.database
      const root = await bearer(app, started.rootClientId, started.rootSecret)
      auth = (await setUpTenant(app, root, tenant)).auth
    }, 60_000)
    afterAll(async () => {
      for (const receiver of receivers.values()) receiver.close()
      await app?.close()
    })

    it('issuance.expired: an offer past its expiry unredeemed is reported once, with its configurations and no claims', async () => {
      await endpoint('expiry')
      await pidWith('expiry')
      const { sessionId } = await offer()
      const redeemed = await offer()
      await redeem(app, redeemed.credentialOffer)
      await expire('issuance_sessions', sessionId)
      await expire('issuance_sessions', redeemed.sessionId)
      await until(() => eventsAt('expiry').some((e) => e.type === 'issuance.expired'))
      // Three more sweeps: still one event, and none for the redeemed offer.
      await sleep(3500)
      const expired = eventsAt('expiry').filter((e) => e.type === 'issuance.expired')
      expect(expired).toStrictEqual([
        {
          type: 'issuance.expired',
          tenantId: tenant,
          sessionId,
          credentialConfigurationIds: ['pid'],
          stage: 'offered',
          expiresAt: expect.any(String),
          at: expect.any(String),
          deliveryId: expect.stringMatching(/^whd_/),
        },
      ])
      const session = (await app.inject({ url: `/api/sessions/${sessionId}`, headers: auth })).json()
      expect(session.status).toBe('expired')
    })

    it('issuance.expired stage token_issued: a redeemed offer whose credential was never asked for is reported once its access token expired too, not before, and not when a credential was issued', async () => {
      await endpoint('abandoned')
      await pidWith('abandoned')
      const abandoned = await offer()
      await redeem(app, abandoned.credentialOffer)
      const fresh = await offer()
      await redeem(app, fresh.credentialOffer)
      const { sessionId: issuedId } = await issue(app, auth)
      for (const id of [abandoned.sessionId, fresh.sessionId, issuedId]) await expire('issuance_sessions', id)
      // Time passes for the token of `abandoned` (5 minutes): `fresh` keeps a live token.
      await database.db.execute(
        sql`update issuance_sessions set token_issued_at = now() - interval '301 seconds'
          where tenant_id = ${tenant} and id in (${abandoned.sessionId}, ${issuedId})`,
      )
      await until(() => eventsAt('abandoned').some((e) => e.type === 'issuance.expired'))
      await sleep(3500)
      const expired = eventsAt('abandoned').filter((e) => e.type === 'issuance.expired')
      expect(expired).toStrictEqual([
        {
          type: 'issuance.expired',
          tenantId: tenant,
          sessionId: abandoned.sessionId,
          credentialConfigurationIds: ['pid'],
          stage: 'token_issued',
          expiresAt: expect.any(String),
          at: expect.any(String),
          deliveryId: expect.stringMatching(/^whd_/),
        },
      ])
      for (const call of allCalls()) expect(call.body).not.toContain(SECRET_CLAIM)
    })

    it('issuance.failed tx_code_locked: the wrong transaction code that locks the offer is reported once, however many guesses race (OpenID4VCI 1.0 §13.6.3)', async () => {
      await endpoint('locked')
      await pidWith('locked')
      const created = await app.inject({
        method: 'POST',
        url: '/api/offers',
        headers: auth,
        payload: {
          credentialConfigurationIds: ['pid'],
          claims: { pid: { given_name: SECRET_CLAIM } },
          txCode: { length: 4 },
        },
      })
      expect(created.statusCode, created.body).toBe(201)
      const { sessionId, credentialOffer, txCode } = created.json() as Loose
      const issuer = new URL(credentialOffer.credential_issuer).pathname
      const code =
        credentialOffer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code']
      const wrong = txCode === '0000' ? '1111' : '0000'
      const guess = () =>
        app.inject({
          method: 'POST',
          url: `${issuer}/token`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({
            grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
            'pre-authorized_code': code,
            tx_code: wrong,
          }).toString(),
        })
      // More guesses than the limit (5), at once: every one is refused, one of them locks.
      const answers = await Promise.all(Array.from({ length: 9 }, guess))
      for (const refused of answers) expect(refused.json().error).toBe('invalid_grant')
      await until(() => eventsAt('locked').length >= 1)
      await sleep(1500)
      expect(eventsAt('locked')).toStrictEqual([
        {
          type: 'issuance.failed',
          tenantId: tenant,
          sessionId,
          credentialConfigurationIds: ['pid'],
          reason: 'tx_code_locked',
          at: expect.any(String),
          deliveryId: expect.stringMatching(/^whd_/),
        },
      ])
      const session = (await app.inject({ url: `/api/sessions/${sessionId}`, headers: auth })).json()
      expect(session.status).toBe('failed')
      for (const call of allCalls()) expect(call.body).not.toContain(SECRET_CLAIM)
    })

    it('issuance.failed: one event per session and reason class however many requests fail, never the request or claims; an invalid token reports nothing', async () => {
      await endpoint('failed')
      await pidWith('failed')
      const { sessionId, credentialOffer } = await offer()
      const issuer = new URL(credentialOffer.credential_issuer).pathname
      const code =
        credentialOffer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code']
      const token = await app.inject({
        method: 'POST',
        url: `${issuer}/token`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
          'pre-authorized_code': code,
        }).toString(),
      })
      const accessToken = token.json().access_token as string
      const credentialRequest = (payload: object) =>
        app.inject({
          method: 'POST',
          url: `${issuer}/credential`,
          headers: { authorization: `Bearer ${accessToken}` },
          payload,
        })
      // A flood of bad proofs and of malformed requests: two reason classes.
      for (let n = 0; n < 5; n++) {
        const bad = await credentialRequest({
          credential_configuration_id: 'pid',
          proofs: { jwt: [`eyJhbGciOiJFUzI1NiJ9.${SECRET_CLAIM}.sig`] },
        })
        expect(bad.statusCode).toBe(400)
        expect(bad.json().error).toBe('invalid_proof')
        const malformed = await credentialRequest({ credential_configuration_id: 'pid', proofs: 7 })
        expect(malformed.json().error).toBe('invalid_credential_request')
      }
      // An invalid token names no session: nothing is reported for it.
      await app.inject({
        method: 'POST',
        url: `${issuer}/credential`,
        headers: { authorization: 'Bearer not-a-token' },
        payload: { credential_configuration_id: 'pid' },
      })
      await until(() => eventsAt('failed').length >= 2)
      await sleep(1500)
      const failed = eventsAt('failed')
      expect(failed.map((e) => (e.type === 'issuance.failed' ? e.reason : e.type)).sort()).toStrictEqual([
        'invalid_credential_request',
        'invalid_proof',
      ])
      expect(failed[0]).toStrictEqual({
        type: 'issuance.failed',
        tenantId: tenant,
        sessionId,
        credentialConfigurationIds: ['pid'],
        reason: expect.any(String),
        at: expect.any(String),
        deliveryId: expect.stringMatching(/^whd_/),
      })
      for (const call of allCalls()) expect(call.body).not.toContain(SECRET_CLAIM)
      const deliveries = (
        await app.inject({ url: '/api/webhook-endpoints/failed/deliveries', headers: auth })
      ).json()
      expect(deliveries.items.map((d: Loose) => d.eventType)).toStrictEqual([
        'issuance.failed',
        'issuance.failed',
      ])
    })

    it('an endpoint that lists event types gets only those: issuance.failed alone, not credential.issued', async () => {
      await endpoint('only-failed', ['issuance.failed'])
      await pidWith('only-failed')
      await issue(app, auth)
      await sleep(1500)
      expect(eventsAt('only-failed')).toStrictEqual([])
      const deliveries = (
        await app.inject({ url: '/api/webhook-endpoints/only-failed/deliveries', headers: auth })
      ).json()
      expect(deliveries.items).toStrictEqual([])
    })

    it('presentation.status costs a presentation flow no statement: the same count with an endpoint (that takes none of its events) as without one', async () => {
      // The endpoint filters every presentation event out, so no delivery runs to blur the count:
      // what is left is what storing the events costs the request fetch and the response. Before
      // brief ops42 item 3 the endpoint cost one statement at the first fetch and two in the
      // response's transaction.
      await endpoint('no-presentation', ['issuance.notification'])
      const issued = await issue(app, auth)
      const statementsOfFlow = async (extra: object) => {
        const counts: number[] = []
        // The least of five: the poll and the expiry sweep (every second) count here too.
        for (let n = 0; n < 5; n++) {
          const created = await app.inject({
            method: 'POST',
            url: '/api/presentation-requests',
            headers: auth,
            payload: { presentationConfigId: 'ask', ...extra },
          })
          expect(created.statusCode, created.body).toBe(201)
          // From the wallet's fetch of the request object to its response (the creation checks
          // the endpoint it names: that read is older than the lifecycle events).
          const before = database.stats().statements
          const requestUri = created.json().requestUri as string
          const jar = (await app.inject({ url: new URL(requestUri).pathname })).body
          const presentation = { created: created.json(), request: decodeJwt(jar) as Loose }
          const answered = await answer(app, presentation, issued)
          expect(answered.statusCode, answered.body).toBe(200)
          counts.push(database.stats().statements - before)
        }
        return Math.min(...counts)
      }
      const without = await statementsOfFlow({})
      const withEndpoint = await statementsOfFlow({ webhookEndpointId: 'no-presentation' })
      expect(withEndpoint).toBe(without)
      expect(
        (await app.inject({ url: '/api/webhook-endpoints/no-presentation/deliveries', headers: auth })).json()
          .items,
      ).toStrictEqual([])
    })

    it('a body kept in clear is sent only when it is a request_retrieved of its own row: a row written into the outbox by other means signs nothing else', async () => {
      await endpoint('clear')
      const body = (id: string, sessionId: string, status: string) =>
        JSON.stringify({
          type: 'presentation.status',
          tenantId: tenant,
          sessionId,
          presentationConfigId: 'ask',
          status,
          at: new Date().toISOString(),
          deliveryId: id,
        })
      const rows = [
        {
          id: 'whd_clearok',
          sessionId: 'ses_a',
          payload: body('whd_clearok', 'ses_a', 'request_retrieved'),
        },
        {
          id: 'whd_clearverified',
          sessionId: 'ses_b',
          payload: body('whd_clearverified', 'ses_b', 'verified'),
        },
        {
          id: 'whd_clearother',
          sessionId: 'ses_c',
          payload: body('whd_clearother', 'ses_d', 'request_retrieved'),
        },
      ]
      for (const row of rows)
        await database.db.execute(sql`insert into webhook_deliveries (tenant_id, id, endpoint_id, event_type,
          session_id, payload_clear, status, attempts, next_attempt_at)
          values (${tenant}, ${row.id}, 'clear', 'presentation.status', ${row.sessionId}, ${row.payload},
            'pending', 0, now())`)
      await until(() => eventsAt('clear').length >= 1)
      await sleep(2500)
      expect(eventsAt('clear').map((e) => e.deliveryId)).toStrictEqual(['whd_clearok'])
      const deliveries = (
        await app.inject({ url: '/api/webhook-endpoints/clear/deliveries', headers: auth })
      ).json().items as Loose[]
      const errors = Object.fromEntries(deliveries.map((d) => [d.id, d.lastError]))
      expect(errors.whd_clearok).toBeNull()
      expect(errors.whd_clearverified).toMatch(/body/)
      expect(errors.whd_clearother).toMatch(/body/)
    })

    it('presentation.status: request_retrieved once however often the wallet fetches, verified (beside presentation.result), and expired for a request never answered; no claims in status events', async () => {
      await endpoint('steps')
      const issued = await issue(app, auth, { given_name: SECRET_CLAIM, age_over_18: true })
      const presentation = await requestPresentation(app, auth, { webhookEndpointId: 'steps' })
      const sessionId = presentation.created.sessionId as string
      // The wallet fetches the request object twice more.
      for (let n = 0; n < 2; n++)
        expect(
          (await app.inject({ url: new URL(presentation.created.requestUri).pathname })).statusCode,
        ).toBe(200)
      const answered = await answer(app, presentation, issued)
      expect(answered.statusCode, answered.body).toBe(200)

      const unanswered = await requestPresentation(app, auth, { webhookEndpointId: 'steps' })
      await expire('presentation_sessions', unanswered.created.sessionId)

      const steps = () =>
        eventsAt('steps').flatMap((e) =>
          e.type === 'presentation.status' ? [`${e.sessionId}:${e.status}`] : [],
        )
      await until(() => steps().length >= 4)
      await sleep(2500)
      expect(steps().sort()).toStrictEqual(
        [
          `${sessionId}:request_retrieved`,
          `${sessionId}:verified`,
          `${unanswered.created.sessionId}:request_retrieved`,
          `${unanswered.created.sessionId}:expired`,
        ].sort(),
      )
      const verified = eventsAt('steps').find(
        (e) => e.type === 'presentation.status' && e.status === 'verified',
      ) as Loose
      expect(verified).toStrictEqual({
        type: 'presentation.status',
        tenantId: tenant,
        sessionId,
        presentationConfigId: 'ask',
        status: 'verified',
        at: expect.any(String),
        deliveryId: expect.stringMatching(/^whd_/),
      })
      expect(eventsAt('steps').filter((e) => e.type === 'presentation.result')).toHaveLength(1)
      for (const call of allCalls().filter((c) => c.body.includes('presentation.status')))
        expect(call.body).not.toContain('age_over_18')
    })
  },
)
