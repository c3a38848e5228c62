import { testDatabases } from '@credential-service/db-schema/testing'
import type { WorldTenantHandle } from '@credential-service/management/testing'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, startAllInOneWorld, startReceiver, webhookEvent } from './harness'
import { answer, issue, requestPresentation } from './session-fixtures'

const PUBLIC_URL = 'https://credentials.example.com'
const REDIRECT = 'https://rp.example.com/done'

// OpenID4VP 1.0 §8.2 / §14.3 and HAIP 5.1: a same-device response is redirected with a
// `response_code`, and the result is released to that code only, once.
describe.each(testDatabases())('same-device response_code on $name', (testDatabase) => {
  let app: FastifyInstance
  let root: Record<string, string>
  let rp: WorldTenantHandle
  let other: WorldTenantHandle
  let rpId = ''

  beforeAll(async () => {
    const started = await startAllInOneWorld(testDatabase, 'presentation', PUBLIC_URL, {
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      WEBHOOK_BACKOFF_MS: '20',
    })
    app = started.app
    await app.ready()
    root = await bearer(app, started.rootClientId, started.rootSecret)
    rp = started.tenants.a
    rpId = rp.id
    other = started.tenants.b
  }, 120_000)
  afterAll(() => app.close())

  const getSession = (id: string, auth = rp.auth) => app.inject({ url: `/api/sessions/${id}`, headers: auth })
  const release = (id: string, responseCode: unknown, auth = rp.auth) =>
    app.inject({
      method: 'POST',
      url: `/api/sessions/${id}/result`,
      headers: auth,
      payload: { responseCode },
    })

  /** A same-device request answered by a wallet: the session id and the code of the redirect. */
  async function answered(extra: object = {}) {
    const presentation = await requestPresentation(app, rp.auth, { redirectUri: REDIRECT, ...extra })
    const response = await answer(app, presentation, await issue(app, rp.auth))
    expect(response.statusCode, response.body).toBe(200)
    const redirect = new URL(response.json().redirect_uri)
    expect(`${redirect.origin}${redirect.pathname}`).toBe(REDIRECT)
    const code = new URLSearchParams(redirect.hash.slice(1)).get('response_code') as string
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/)
    return { sessionId: presentation.created.sessionId as string, code }
  }

  it('S-86 session fixation: a request relayed to a victim; the attacker polling without the code never gets the claims', async () => {
    const receiver = await startReceiver()
    const hook = await app.inject({
      method: 'POST',
      url: '/api/webhook-endpoints',
      headers: rp.auth,
      payload: {
        id: 'results',
        url: `${receiver.url}/in`,
        auth: { type: 'none' },
        events: ['presentation.result'],
      },
    })
    expect(hook.statusCode, hook.body).toBe(201)
    // The tenant drops claims a webhook received; this webhook receives none, so nothing is dropped.
    await app.inject({
      method: 'PATCH',
      url: `/api/tenants/${rpId}`,
      headers: root,
      payload: { presentationRetention: 'drop-after-delivery' },
    })
    try {
      // The attacker starts a same-device flow at the RP and relays the request to a victim, whose
      // wallet answers; the redirect (with the code) lands in the victim's browser.
      const { sessionId, code } = await answered({ webhookEndpointId: 'results' })
      const { sessionId: attackersOwn, code: attackersCode } = await answered()

      // The attacker's session polls: verified, but no claims.
      let polled = (await getSession(sessionId)).json()
      for (let i = 0; i < 100 && polled.delivery.status !== 'delivered'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        polled = (await getSession(sessionId)).json()
      }
      expect(polled).toStrictEqual({
        id: sessionId,
        kind: 'presentation',
        status: 'verified',
        presentationConfigId: 'ask',
        failureReason: null,
        claims: null,
        responseCodeRequired: true,
        delivery: { status: 'delivered', attempts: 1, error: null },
        createdByClientId: rp.clientId,
        expiresAt: expect.any(String),
        requestFetchedAt: expect.any(String),
        responseReceivedAt: expect.any(String),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      })
      const listed = (await app.inject({ url: '/api/sessions?kind=presentation', headers: rp.auth })).json()
      expect(listed.items.find((s: { id: string }) => s.id === sessionId)).toMatchObject({ claims: null })
      // Nor does the webhook carry them.
      const event = webhookEvent(receiver.received[0])
      expect(event).toStrictEqual({
        type: 'presentation.result',
        tenantId: rpId,
        sessionId,
        presentationConfigId: 'ask',
        status: 'verified',
        responseCodeRequired: true,
        deliveryId: expect.stringMatching(/^whd_/),
      })

      // Guessing, or the code of another session, releases nothing.
      for (const guess of ['x', attackersCode, code.slice(0, -1)]) {
        const refused = await release(sessionId, guess)
        expect(refused.statusCode).toBe(403)
        expect(refused.json().code).toBe('forbidden')
      }

      // The victim's browser session, the one the redirect reached, gets the claims: once.
      const released = await release(sessionId, code)
      expect(released.statusCode, released.body).toBe(200)
      expect(released.json()).toMatchObject({ id: sessionId, status: 'verified', responseCodeRequired: true })
      expect(released.json().claims.pid[0]).toMatchObject({ vct: 'urn:eudi:pid:1', age_over_18: true })
      expect(released.json().claims.pid[0].given_name).toBeUndefined()
      const again = await release(sessionId, code)
      expect(again.statusCode).toBe(403)
      expect(again.json().code).toBe('forbidden')
      expect((await getSession(sessionId)).json()).toMatchObject({ status: 'verified', claims: null })

      // The attacker's own session is untouched by the attempts on this one.
      expect((await release(attackersOwn, attackersCode)).statusCode).toBe(200)
    } finally {
      await app.inject({
        method: 'PATCH',
        url: `/api/tenants/${rpId}`,
        headers: root,
        payload: { presentationRetention: 'keep' },
      })
      receiver.close()
    }
  })

  it('S-100: another tenant’s client cannot release a result, even with the right code; the code still works', async () => {
    const { sessionId, code } = await answered()
    for (const url of [
      `/api/sessions/${sessionId}/result`,
      `/api/tenants/${rpId}/sessions/${sessionId}/result`,
    ]) {
      const response = await app.inject({
        method: 'POST',
        url,
        headers: other.auth,
        payload: { responseCode: code },
      })
      expect(response.statusCode, url).toBe(404)
      expect(response.json().code).toBe('not_found')
    }
    const released = await app.inject({
      method: 'POST',
      url: `/api/tenants/${rpId}/sessions/${sessionId}/result`,
      headers: rp.auth,
      payload: { responseCode: code },
    })
    expect(released.statusCode).toBe(200)
  })

  it('OpenID4VP §8.2: a cross-device session (no redirect) shows its claims on GET; it has no code to release (409)', async () => {
    const presentation = await requestPresentation(app, rp.auth)
    const response = await answer(app, presentation, await issue(app, rp.auth))
    expect(response.json()).toStrictEqual({})
    const sessionId = presentation.created.sessionId
    const session = (await getSession(sessionId)).json()
    expect(session).toMatchObject({ status: 'verified', responseCodeRequired: false })
    expect(session.claims.pid[0]).toMatchObject({ age_over_18: true })
    const refused = await release(sessionId, 'anything')
    expect(refused.statusCode).toBe(409)
    expect(refused.json().code).toBe('conflict')
    // Not answered yet: no code either.
    const pending = await requestPresentation(app, rp.auth, { redirectUri: REDIRECT })
    expect((await release(pending.created.sessionId, 'anything')).statusCode).toBe(409)
  })

  it('spec §5 rule 4: releasing needs presentation:request; a malformed code is 400', async () => {
    const { sessionId, code } = await answered()
    const issuer = await app.inject({
      method: 'POST',
      url: `/api/tenants/${rpId}/clients`,
      headers: root,
      payload: { roles: ['issuance:offer'] },
    })
    const issuerOnly = await bearer(app, issuer.json().clientId, issuer.json().clientSecret)
    const forbidden = await release(sessionId, code, issuerOnly)
    expect(forbidden.statusCode).toBe(403)
    // Reading a presentation session needs the presentation role too.
    expect((await getSession(sessionId, issuerOnly)).statusCode).toBe(403)
    for (const bad of [undefined, '', 'x'.repeat(201), 42]) {
      const response = await release(sessionId, bad)
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({
        code: 'invalid_input',
        errors: [{ path: 'body.responseCode', message: expect.any(String) }],
      })
    }
    expect((await release(sessionId, code)).statusCode).toBe(200)
  })
})
