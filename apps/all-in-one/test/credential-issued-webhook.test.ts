import { createHmac, timingSafeEqual } from 'node:crypto'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { testDatabases } from '@credential-service/db-schema/testing'
import { verifyWebhook, WebhookVerificationError } from '@credential-service/sdk'
import type { FastifyInstance } from 'fastify'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, type ReceivedCall, startAllInOne, startReceiver, webhookEvent } from './harness'
import { issue, setUpTenant } from './session-fixtures'

type Headers = Record<string, string>
// biome-ignore lint/suspicious/noExplicitAny: API answers are read loosely in tests
type Loose = Record<string, any>

/** Every log line of the app (trace level), for the flow's story. */
const LOGS: string[] = []
const LOCAL = { OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' }

/**
 * A receiver's check written from the Standard Webhooks text, not from our code: the content
 * signed is `msg_id.timestamp.payload`; a `whsec_` secret is base64 of the key; the header lists
 * space-delimited `v1,<base64 HMAC-SHA256>` signatures, any one of which may match.
 */
function standardWebhooksValid(call: ReceivedCall, secret: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  const content = `${call.headers['webhook-id']}.${call.headers['webhook-timestamp']}.${call.body}`
  const expected = createHmac('sha256', key).update(content).digest()
  return (call.headers['webhook-signature'] ?? '').split(' ').some((entry) => {
    const [version, signature] = entry.split(',')
    const given = Buffer.from(signature ?? '', 'base64')
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected)
  })
}

/** Polls until `count` calls arrived (at most ~10 s). */
async function arrived(received: ReceivedCall[], count: number) {
  for (let i = 0; i < 200 && received.length < count; i++) await new Promise((r) => setTimeout(r, 50))
  return received
}

describe.each(testDatabases())(
  'credential.issued webhook events on $name (issue 42 item 1)',
  (testDatabase) => {
    let app: FastifyInstance
    let database: DatabaseHandle
    let auth: Headers
    let receiver: Awaited<ReturnType<typeof startReceiver>>
    const tenant = `ci-${crypto.randomUUID().slice(0, 8)}`

    const put = async (url: string, payload: object) => {
      const response = await app.inject({ method: 'PUT', url, headers: auth, payload })
      expect(response.statusCode, response.body).toBe(200)
      return response.json() as Loose
    }
    const pidWith = async (webhookEndpointId?: string, statusManagement = false) => {
      const {
        createdAt: _c,
        updatedAt: _u,
        webhookEndpointId: _w,
        ...config
      } = (await app.inject({ url: '/api/credentials/pid', headers: auth })).json()
      await put('/api/credentials/pid', {
        ...config,
        statusManagement,
        ...(webhookEndpointId ? { webhookEndpointId } : {}),
      })
    }

    beforeAll(async () => {
      LOGS.length = 0
      const started = await startAllInOne(
        testDatabase,
        'https://credentials.example.com',
        LOCAL,
        undefined,
        LOGS,
      )
      app = started.app
      database = started.database
      const root = await bearer(app, started.rootClientId, started.rootSecret)
      auth = (await setUpTenant(app, root, tenant)).auth
      receiver = await startReceiver()
    }, 60_000)
    afterAll(async () => {
      receiver?.close()
      await app?.close()
    })

    it('one event per credential request, with what was issued and never a claim value; Standard Webhooks and X-Signature headers both verify', async () => {
      const created = await app.inject({
        method: 'POST',
        url: '/api/webhook-endpoints',
        headers: auth,
        payload: {
          id: 'both',
          url: `${receiver.url}/in`,
          auth: { type: 'hmac' },
          signatureHeaders: 'both',
        },
      })
      expect(created.statusCode, created.body).toBe(201)
      const { signingSecret, signatureHeaders } = created.json()
      expect(signatureHeaders).toBe('both')
      // Standard Webhooks: a generated secret is `whsec_` and base64 (of 32 bytes here).
      expect(signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      await pidWith('both')

      const { sessionId } = await issue(app, auth, { given_name: 'Erika-Unique-Value', age_over_18: true })
      const [call] = await arrived(receiver.received, 1)
      const event = webhookEvent(call)
      const session = (await app.inject({ url: `/api/sessions/${sessionId}`, headers: auth })).json()
      expect(event).toStrictEqual({
        type: 'credential.issued',
        tenantId: tenant,
        sessionId,
        credentialConfigurationId: 'pid',
        format: 'dc+sd-jwt',
        count: 1,
        statusListEntries: [],
        deferred: false,
        notificationId: expect.stringMatching(/^ntf_/),
        at: expect.any(String),
        deliveryId: expect.stringMatching(/^whd_/),
      })
      expect(session.status).toBe('completed')
      // Never claims: neither the values nor their names travel.
      expect(call?.body).not.toContain('Erika-Unique-Value')
      expect(call?.body).not.toContain('given_name')

      const received = call as ReceivedCall
      // Standard Webhooks: webhook-id is the delivery id, the same on every attempt.
      expect(received.headers['webhook-id']).toBe(event.deliveryId)
      expect(received.headers['webhook-timestamp']).toMatch(/^[0-9]+$/)
      expect(received.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
      expect(standardWebhooksValid(received, signingSecret)).toBe(true)
      expect(standardWebhooksValid({ ...received, body: `${received.body} ` }, signingSecret)).toBe(false)
      // The standardwebhooks package, an independent implementation, agrees.
      expect(new Webhook(signingSecret).verify(received.body, received.headers)).toStrictEqual(event)
      expect(() =>
        new Webhook(signingSecret).verify(received.body.replace('pid', 'pie'), received.headers),
      ).toThrow()
      // Today's X-Signature travels beside them (`both`).
      const xSignature = createHmac('sha256', signingSecret)
        .update(`${received.headers['x-timestamp']}.${received.body}`)
        .digest('hex')
      expect(received.headers['x-signature']).toBe(`sha256=${xSignature}`)

      // The SDK's verifyWebhook takes either set of headers.
      const only = (names: string[]) =>
        Object.fromEntries(Object.entries(received.headers).filter(([name]) => names.includes(name)))
      const standard = only(['webhook-id', 'webhook-timestamp', 'webhook-signature'])
      const legacy = only(['x-timestamp', 'x-signature'])
      expect(await verifyWebhook(received.body, standard, signingSecret)).toStrictEqual(event)
      expect(await verifyWebhook(received.body, legacy, signingSecret)).toStrictEqual(event)
      for (const headers of [standard, legacy]) {
        const refused = await verifyWebhook(`${received.body} `, headers, signingSecret).catch(
          (e: unknown) => e,
        )
        expect(refused).toBeInstanceOf(WebhookVerificationError)
        expect((refused as WebhookVerificationError).reason).toBe('bad_signature')
      }
      // Issue 42 item 4: one info line per domain step, with tenant and session; no claim, no secret.
      const lines = LOGS.map((line) => JSON.parse(line) as Loose)
      for (const msg of ['offer created', 'token issued', 'credential issued', 'webhook delivered'])
        expect(lines, msg).toContainEqual(
          expect.objectContaining({ level: 30, msg, tenantId: tenant, sessionId }),
        )
      expect(lines).toContainEqual(
        expect.objectContaining({ msg: 'credential issued', credentialConfigurationId: 'pid', count: 1 }),
      )
      for (const line of LOGS) {
        expect(line).not.toContain('Erika-Unique-Value')
        expect(line).not.toContain(signingSecret)
        // No token, credential or code: none of them is logged whole (a JWT starts with eyJ).
        expect(line).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}/)
      }
      const wrongId = await verifyWebhook(
        received.body,
        { ...standard, 'webhook-id': 'whd_other' },
        signingSecret,
      ).catch((e: unknown) => e)
      expect((wrongId as WebhookVerificationError).reason).toBe('bad_signature')
    })

    it('Standard Webhooks alone: no X-Signature; a secret of our own (not whsec_) signs with its UTF-8 bytes; the status list entry of the credential', async () => {
      const secret = 'a-signing-secret-of-our-own-0123456789'
      const created = await app.inject({
        method: 'POST',
        url: '/api/webhook-endpoints',
        headers: auth,
        payload: {
          id: 'std',
          url: `${receiver.url}/std`,
          auth: { type: 'hmac', secret },
          signatureHeaders: 'standard-webhooks',
        },
      })
      expect(created.statusCode, created.body).toBe(201)
      await pidWith('std', true)
      const before = receiver.received.length
      const { credential } = await issue(app, auth)
      const call = (await arrived(receiver.received, before + 1))[before] as ReceivedCall
      // The entry the credential's status claim names (Token Status List §6.1: status.status_list).
      const payload = JSON.parse(Buffer.from(credential.split('.')[1] as string, 'base64url').toString())
      expect(webhookEvent(call)).toMatchObject({ count: 1, statusListEntries: [payload.status.status_list] })
      expect(call.headers['x-signature']).toBeUndefined()
      expect(call.headers['x-timestamp']).toBeUndefined()
      const asWhsec = `whsec_${Buffer.from(secret).toString('base64')}`
      expect(standardWebhooksValid(call, asWhsec)).toBe(true)
      expect(new Webhook(secret, { format: 'raw' }).verify(call.body, call.headers)).toMatchObject({
        type: 'credential.issued',
      })
      expect(await verifyWebhook(call.body, call.headers, secret)).toMatchObject({
        type: 'credential.issued',
      })
    })

    it('the event costs the credential request no statement: the same count with an endpoint (that filters it out) as without one', async () => {
      // An endpoint that does not subscribe to credential.issued: the statement that records the
      // issue looks and stores nothing, so no delivery runs afterwards to blur the count.
      const picked = await app.inject({
        method: 'POST',
        url: '/api/webhook-endpoints',
        headers: auth,
        payload: { id: 'picky', url: `${receiver.url}/picky`, events: ['issuance.notification'] },
      })
      expect(picked.statusCode, picked.body).toBe(201)
      const statementsOfIssue = async () => {
        const counts: number[] = []
        for (let n = 0; n < 3; n++) {
          const before = database.stats().statements
          await issue(app, auth)
          counts.push(database.stats().statements - before)
        }
        return Math.min(...counts)
      }
      await pidWith(undefined)
      const without = await statementsOfIssue()
      await pidWith('picky')
      const withEndpoint = await statementsOfIssue()
      expect(withEndpoint).toBe(without)
      const picky = (
        await app.inject({ url: '/api/webhook-endpoints/picky/deliveries', headers: auth })
      ).json()
      expect(picky.items).toStrictEqual([])
    })
  },
)
