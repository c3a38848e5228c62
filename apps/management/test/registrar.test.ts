import { bearer, startWorld, type World } from '@credential-service/management/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RegistrarStandIn, startRegistrarStandIn } from '../../all-in-one/test/registrar-standin'

const PROBLEM = /^application\/problem\+json/
const SECRET = `registrar-secret-${crypto.randomUUID()}`
type Headers = Record<string, string>

// routes/registrar.ts (spec §1.3, docs/registrar.md) over the `mgmt-registrar` world (each tenant
// has key chain `keys`, presentation configuration `ask`, an `admin` with registrar:manage and a
// `verifier` with every other role of it) and the registrar stand-in of the all-in-one suites.
// What the certificates do to request objects is checked by apps/all-in-one/test/registrar.test.ts.
describe('management registrar connection', () => {
  let world: World
  let registrar: RegistrarStandIn
  let verifier: Headers

  const call = (
    method: 'GET' | 'PUT' | 'POST' | 'DELETE',
    url: string,
    payload?: object,
    headers: Headers = world.tenants.a.auth,
  ) => world.app.inject({ method, url, headers, ...(payload ? { payload } : {}) })
  const connection = () => ({
    baseUrl: registrar.baseUrl,
    tokenUrl: registrar.tokenUrl,
    clientId: 'rp-client',
    clientSecret: SECRET,
  })
  const registration = {
    presentationConfigId: 'ask',
    purpose: [{ lang: 'en', content: 'Age check' }],
    privacyPolicyUri: 'https://verifier.example.com/privacy',
    supportUri: 'https://verifier.example.com/support',
  }

  beforeAll(async () => {
    registrar = await startRegistrarStandIn({ id: 'rp-client', secret: SECRET })
    // The stand-in listens on plain http on loopback: the test policy allows exactly that.
    world = await startWorld('mgmt-registrar', {
      env: { OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' },
    })
    const { clientId, clientSecret } = world.tenants.a.clients.verifier as {
      clientId: string
      clientSecret: string
    }
    verifier = await bearer(world.app, clientId, clientSecret)
  })
  afterAll(async () => {
    await world?.close()
    await registrar?.close()
  })

  describe('happy', () => {
    it('PUT stores the connection; GET answers it under either mount, never with the client secret', async () => {
      expect((await call('GET', '/api/registrar')).statusCode).toBe(404)
      const put = await call('PUT', '/api/registrar', connection())
      expect(put.statusCode, put.body).toBe(200)
      expect(put.json()).toStrictEqual({
        baseUrl: registrar.baseUrl,
        tokenUrl: registrar.tokenUrl,
        clientId: 'rp-client',
        relyingParty: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      })
      const read = await call('GET', `/api/tenants/${world.tenants.a.id}/registrar`)
      expect(read.statusCode).toBe(200)
      expect(read.json()).toStrictEqual(put.json())
      expect(`${put.body}${read.body}`).not.toContain(SECRET)
    })

    it('registers the tenant as relying party; the connection then names the registration', async () => {
      const response = await call('POST', '/api/registrar/relying-party', {
        name: 'World Verifier GmbH',
        roles: ['verifier'],
      })
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().relyingParty).toStrictEqual({
        id: expect.any(String),
        name: 'World Verifier GmbH',
        roles: ['verifier'],
        registeredAt: expect.any(String),
      })
      expect(registrar.relyingParties.has(response.json().relyingParty.id)).toBe(true)
      expect((await call('GET', '/api/registrar')).json().relyingParty).toStrictEqual(
        response.json().relyingParty,
      )
    })

    it('OpenID4VP §5.9.3: an access certificate is obtained for a key chain and stored on it (201)', async () => {
      const response = await call('POST', '/api/registrar/access-certificates', { keyChainId: 'keys' })
      expect(response.statusCode, response.body).toBe(201)
      const issued = response.json()
      expect(issued).toStrictEqual({
        keyChainId: 'keys',
        registrarCertificateId: expect.any(String),
        certificateChain: [expect.stringContaining('BEGIN CERTIFICATE'), expect.any(String)],
      })
      const keyChain = (await call('GET', '/api/key-chains/keys')).json()
      expect(keyChain.activeKey.certificateChain).toStrictEqual(issued.certificateChain)
    })

    it('OpenID4VP 1.0 §5.1: a registration certificate is obtained for a presentation configuration (201)', async () => {
      const response = await call(
        'POST',
        `/api/tenants/${world.tenants.a.id}/registrar/registration-certificates`,
        registration,
      )
      expect(response.statusCode, response.body).toBe(201)
      expect(response.json()).toStrictEqual({
        presentationConfigId: 'ask',
        registrarCertificateId: expect.any(String),
        jwt: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
        expiresAt: expect.any(String),
        createdAt: expect.any(String),
      })
    })

    it('DELETE removes a connection (204); reading it is then 404; other tenants keep theirs', async () => {
      const b = world.tenants.b.auth
      expect((await call('PUT', '/api/registrar', connection(), b)).statusCode).toBe(200)
      const deleted = await call('DELETE', '/api/registrar', undefined, b)
      expect(deleted.statusCode, deleted.body).toBe(204)
      expect(deleted.body).toBe('')
      expect((await call('GET', '/api/registrar', undefined, b)).statusCode).toBe(404)
      expect((await call('GET', '/api/registrar')).statusCode).toBe(200)
    })
  })

  describe('error', () => {
    it('RFC 9457: malformed bodies are 400 problems naming each field', async () => {
      for (const [url, method, payload, path] of [
        ['/api/registrar', 'PUT', { ...connection(), baseUrl: 'not a url' }, 'body.baseUrl'],
        ['/api/registrar/relying-party', 'POST', { name: '' }, 'body.name'],
        ['/api/registrar/access-certificates', 'POST', { keyChainId: 'keys', extra: 1 }, ''],
        [
          '/api/registrar/registration-certificates',
          'POST',
          { ...registration, purpose: [] },
          'body.purpose',
        ],
      ] as const) {
        const response = await call(method, url, payload)
        expect(response.statusCode, url).toBe(400)
        expect(response.headers['content-type']).toMatch(PROBLEM)
        expect(response.json().code).toBe('invalid_input')
        expect(response.json().errors.length, url).toBeGreaterThan(0)
        if (path) expect(response.json().errors).toContainEqual(expect.objectContaining({ path }))
      }
    })

    it('rule violations are 422 naming the field: no secret on a first PUT, an internal URL (S-120), an unknown key chain', async () => {
      const { clientSecret: _, ...withoutSecret } = connection()
      const first = await call('PUT', '/api/registrar', withoutSecret, world.tenants.b.auth)
      expect(first.statusCode).toBe(422)
      expect(first.json().errors).toStrictEqual([expect.objectContaining({ path: 'body.clientSecret' })])
      const internal = await call('PUT', '/api/registrar', {
        ...connection(),
        baseUrl: 'http://169.254.169.254/x',
      })
      expect(internal.statusCode).toBe(422)
      expect(internal.json().errors[0].path).toBe('body.baseUrl')
      const unknown = await call('POST', '/api/registrar/access-certificates', { keyChainId: 'nope' })
      expect(unknown.statusCode).toBe(422)
      expect(unknown.json()).toMatchObject({
        code: 'rule_violation',
        errors: [expect.objectContaining({ path: 'body.keyChainId' })],
      })
    })

    it('a second registration is 409; a registrar failure is a 502 problem (S-125)', async () => {
      const again = await call('POST', '/api/registrar/relying-party', { name: 'again' })
      expect(again.statusCode).toBe(409)
      expect(again.json().code).toBe('conflict')
      registrar.fail('/api/registration-certificates', 503)
      const failed = await call('POST', '/api/registrar/registration-certificates', registration)
      expect(failed.statusCode).toBe(502)
      expect(failed.headers['content-type']).toMatch(PROBLEM)
      expect(failed.json().code).toBe('upstream_failure')
    })
  })

  describe('security', () => {
    it('spec §5 rule 4: every operation needs registrar:manage (403)', async () => {
      for (const [method, url, payload] of [
        ['GET', '/api/registrar', undefined],
        ['PUT', '/api/registrar', connection()],
        ['DELETE', '/api/registrar', undefined],
        ['POST', '/api/registrar/relying-party', { name: 'x' }],
        ['POST', '/api/registrar/access-certificates', { keyChainId: 'keys' }],
        ['POST', '/api/registrar/registration-certificates', registration],
      ] as const) {
        const response = await call(method, url, payload, verifier)
        expect(response.statusCode, `${method} ${url}`).toBe(403)
        expect(response.json().code).toBe('forbidden')
      }
      expect((await call('GET', '/api/registrar')).statusCode).toBe(200)
    })

    it('S-100: tenant B cannot read, replace, delete or use tenant A’s connection (404); it stays unchanged', async () => {
      const { a, b } = world.tenants
      const before = (await call('GET', '/api/registrar')).json()
      const calls = registrar.calls.length
      for (const [method, url, payload] of [
        ['GET', `/api/tenants/${a.id}/registrar`, undefined],
        ['PUT', `/api/tenants/${a.id}/registrar`, connection()],
        ['DELETE', `/api/tenants/${a.id}/registrar`, undefined],
        ['POST', `/api/tenants/${a.id}/registrar/relying-party`, { name: 'x' }],
        ['POST', `/api/tenants/${a.id}/registrar/access-certificates`, { keyChainId: 'keys' }],
        ['POST', `/api/tenants/${a.id}/registrar/registration-certificates`, registration],
      ] as const) {
        const response = await call(method, url, payload, b.auth)
        expect(response.statusCode, `${method} ${url}`).toBe(404)
      }
      expect((await call('GET', '/api/registrar', undefined, b.auth)).statusCode).toBe(404)
      expect((await call('GET', '/api/registrar')).json()).toStrictEqual(before)
      expect(registrar.calls.length).toBe(calls)
    })
  })
})
