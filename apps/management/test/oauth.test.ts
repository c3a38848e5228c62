import { randomBytes } from 'node:crypto'
import { deriveManagementSigningKey } from '@credential-service/crypto'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { testDatabases } from '@credential-service/db-schema/testing'
import { createServer, FIRST_HIT_FLUSH_MS } from '@credential-service/server-kit'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildManagementApp } from '../src/app'
import { createHarness, type Harness, random, testConfig } from './harness'

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`

describe.each(testDatabases())('POST /api/oauth2/token on $name', (testDatabase) => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness(testDatabase)
  })
  afterAll(() => h.close())

  const token = (payload: unknown, headers: Record<string, string> = {}) =>
    h.app.inject({ method: 'POST', url: '/api/oauth2/token', payload: payload as string, headers })

  describe('happy', () => {
    it('RFC 6749 §4.4: credentials in a JSON body give a Bearer JWT with no-store', async () => {
      const response = await token({
        grant_type: 'client_credentials',
        client_id: h.root.clientId,
        client_secret: h.root.clientSecret,
      })
      expect(response.statusCode).toBe(200)
      expect(response.headers['cache-control']).toBe('no-store')
      const body = response.json()
      expect(body).toStrictEqual({
        access_token: expect.any(String),
        token_type: 'Bearer',
        expires_in: 3600,
        scope: 'tenant:manage',
      })
      const claims = decodeJwt(body.access_token)
      expect(claims).toStrictEqual({
        iss: 'https://issuer.test/api',
        aud: 'https://issuer.test/api',
        client_id: h.root.clientId,
        roles: ['tenant:manage'],
        iat: expect.any(Number),
        exp: (claims.iat as number) + 3600,
        jti: expect.any(String),
      })
      expect(claims.sub).toBeUndefined() // operator client: bound to no tenant
      expect(decodeProtectedHeader(body.access_token).alg).toBe('EdDSA')
    })

    it('RFC 6749 §2.3.1: credentials by Authorization: Basic', async () => {
      const response = await token(
        { grant_type: 'client_credentials' },
        { authorization: basic(h.root.clientId, h.root.clientSecret) },
      )
      expect(response.statusCode).toBe(200)
    })

    it('RFC 6749 §4.4.2: an application/x-www-form-urlencoded body', async () => {
      const form = new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: h.root.clientId,
        client_secret: h.root.clientSecret,
      })
      const response = await token(form.toString(), { 'content-type': 'application/x-www-form-urlencoded' })
      expect(response.statusCode).toBe(200)
    })

    it('a tenant client token carries the tenant as sub and its roles', async () => {
      const client = await h.createClient(h.tenantA, ['issuance:offer', 'key:read'])
      const claims = decodeJwt(client.token)
      expect(claims.sub).toBe(h.tenantA)
      expect(claims.roles).toStrictEqual(['issuance:offer', 'key:read'])
    })

    it('RFC 6749 §3.3: scope narrows the roles; a role the client lacks is invalid_scope', async () => {
      const client = await h.createClient(h.tenantA, ['issuance:offer', 'key:read'])
      const narrowed = await token({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: client.clientSecret,
        scope: 'key:read',
      })
      expect(narrowed.json().scope).toBe('key:read')
      expect(decodeJwt(narrowed.json().access_token).roles).toStrictEqual(['key:read'])
      const wider = await token({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: client.clientSecret,
        scope: 'key:manage',
      })
      expect(wider.statusCode).toBe(400)
      expect(wider.json().error).toBe('invalid_scope')
    })

    it('RFC 8414: metadata and JWKS under /api verify the token', async () => {
      const metadata = (await h.app.inject({ url: '/api/.well-known/oauth-authorization-server' })).json()
      expect(metadata).toMatchObject({
        issuer: 'https://issuer.test/api',
        token_endpoint: 'https://issuer.test/api/oauth2/token',
        jwks_uri: 'https://issuer.test/api/oauth2/jwks',
        grant_types_supported: ['client_credentials'],
      })
      const jwks = (await h.app.inject({ url: '/api/oauth2/jwks' })).json()
      const { createLocalJWKSet, jwtVerify } = await import('jose')
      const { payload } = await jwtVerify(h.root.token, createLocalJWKSet(jwks), { issuer: metadata.issuer })
      expect(payload.client_id).toBe(h.root.clientId)
      expect(JSON.stringify(jwks)).not.toContain('"d"')
    })
  })

  describe('error', () => {
    it('RFC 6749 §5.2: a wrong secret is invalid_client 401 with WWW-Authenticate', async () => {
      const response = await token({
        grant_type: 'client_credentials',
        client_id: h.root.clientId,
        client_secret: 'wrong-secret-wrong-secret',
      })
      expect(response.statusCode).toBe(401)
      expect(response.headers['www-authenticate']).toMatch(/^Basic realm=/)
      expect(response.headers['cache-control']).toBe('no-store')
      expect(response.json()).toStrictEqual({
        error: 'invalid_client',
        error_description: 'client authentication failed',
      })
    })

    it('RFC 6749 §5.2: an unknown client answers exactly like a wrong secret', async () => {
      const response = await token({
        grant_type: 'client_credentials',
        client_id: 'no-such-client',
        client_secret: 'whatever-secret-123',
      })
      expect(response.statusCode).toBe(401)
      expect(response.json()).toStrictEqual({
        error: 'invalid_client',
        error_description: 'client authentication failed',
      })
    })

    it('RFC 6749 §5.2: another grant is unsupported_grant_type', async () => {
      const response = await token({
        grant_type: 'password',
        client_id: h.root.clientId,
        client_secret: h.root.clientSecret,
      })
      expect(response.statusCode).toBe(400)
      expect(response.json().error).toBe('unsupported_grant_type')
    })

    it('RFC 6749 §5.2: a missing grant_type is invalid_request', async () => {
      const response = await token({ client_id: h.root.clientId, client_secret: h.root.clientSecret })
      expect(response.statusCode).toBe(400)
      expect(response.json().error).toBe('invalid_request')
      expect(response.headers['cache-control']).toBe('no-store')
    })

    it('RFC 6749 §2.3: credentials in both Basic and the body are invalid_request', async () => {
      const response = await token(
        { grant_type: 'client_credentials', client_id: h.root.clientId, client_secret: h.root.clientSecret },
        { authorization: basic(h.root.clientId, h.root.clientSecret) },
      )
      expect(response.statusCode).toBe(400)
      expect(response.json().error).toBe('invalid_request')
    })

    it('no credentials at all is invalid_client', async () => {
      const response = await token({ grant_type: 'client_credentials' })
      expect(response.statusCode).toBe(401)
      expect(response.json().error).toBe('invalid_client')
    })

    it('malformed JSON is invalid_request, not a 500', async () => {
      const response = await token('{"grant_type": ', { 'content-type': 'application/json' })
      expect(response.statusCode).toBe(400)
      expect(response.json().error).toBe('invalid_request')
    })

    it('an unsupported content type is refused with an OAuth error', async () => {
      const response = await token('grant_type=client_credentials', { 'content-type': 'text/plain' })
      expect(response.statusCode).toBe(415)
      expect(response.json().error).toBe('invalid_request')
    })
  })

  describe('security', () => {
    it('issue 11: an unknown client id costs the bcrypt compare of a wrong secret (timing)', async () => {
      const client = await h.createClient(h.tenantA, ['key:read'])
      // CPU time of this process (the bcrypt compare runs here), not wall time: other processes
      // on a busy machine stretch the wall clock of one attempt and not the other.
      const attempt = (clientId: string) => async () => {
        const start = process.cpuUsage()
        const response = await token({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: 'a-wrong-secret-of-some-length',
        })
        expect(response.statusCode).toBe(401)
        const used = process.cpuUsage(start)
        return (used.user + used.system) / 1000
      }
      // The client has authenticated (createClient got a token), so its success is remembered:
      // a wrong secret must still cost bcrypt, and so must an id that does not exist.
      const median = async (run: () => Promise<number>) => {
        const times = [await run(), await run(), await run()].sort((a, b) => a - b)
        return times[1] as number
      }
      await attempt('no-such-client-warm-up')() // makes the dummy hash
      const wrongSecret = await median(attempt(client.clientId))
      const unknownId = await median(attempt(random('no-such-client')))
      expect(unknownId).toBeGreaterThan(wrongSecret / 2)
      expect(wrongSecret).toBeGreaterThan(unknownId / 2)
    })

    it('issue 11: a secret sharing the first 72 bytes of the right one is invalid_client', async () => {
      const secret = `${'s'.repeat(72)}-the-rest-matters`
      const created = await h.app.inject({
        method: 'POST',
        url: `/api/tenants/${h.tenantA}/clients`,
        headers: { authorization: `Bearer ${await h.tokenFor(h.root.clientId, h.root.clientSecret)}` },
        payload: { roles: ['key:read'], clientSecret: secret },
      })
      expect(created.statusCode).toBe(201)
      const { clientId } = created.json()
      const guess = await token({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: `${'s'.repeat(72)}-anything-else`,
      })
      expect(guess.statusCode).toBe(401)
      expect(guess.json()).toStrictEqual({
        error: 'invalid_client',
        error_description: 'client authentication failed',
      })
      expect(await h.tokenFor(clientId, secret)).toEqual(expect.any(String))
    })
  })
})

/**
 * A public address of its own (a random /64 of the documentation prefix): counters in a shared
 * PostgreSQL test database outlive a run by up to a minute.
 */
const randomIp = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::7`

describe.each(testDatabases())('POST /api/oauth2/token throttling on $name', (testDatabase) => {
  const LIMIT = 3
  const token = (
    app: Harness['app'],
    payload: Record<string, string>,
    headers: Record<string, string> = {},
  ) =>
    app.inject({
      method: 'POST',
      url: '/api/oauth2/token',
      payload: { grant_type: 'client_credentials', ...payload },
      headers,
    })
  const wrong = (clientId: string) => ({ client_id: clientId, client_secret: 'wrong-secret-wrong-secret' })

  for (const store of ['memory', 'postgres'] as const) {
    describe(`RATE_LIMIT_STORE=${store}`, () => {
      let h: Harness
      beforeAll(async () => {
        h = await createHarness(testDatabase, {
          env: { RATE_LIMIT_STORE: store, RATE_LIMIT_TOKEN_PER_MINUTE: String(LIMIT) },
        })
      })
      afterAll(() => h.close())

      it('S-109: after N wrong secrets for one client id, attempt N+1 is 429 with Retry-After, even with the right secret', async () => {
        const client = await h.createClient(h.tenantA, ['key:read'])
        // Each attempt from its own address: the per-client-id count alone locks the client.
        const from = (_n: number) => ({ 'x-forwarded-for': randomIp() })
        for (let n = 1; n <= LIMIT; n++) {
          expect((await token(h.app, wrong(client.clientId), from(n))).statusCode).toBe(401)
        }
        const locked = await token(
          h.app,
          { client_id: client.clientId, client_secret: client.clientSecret },
          from(LIMIT + 1),
        )
        expect(locked.statusCode).toBe(429)
        expect(locked.json()).toStrictEqual({
          error: 'invalid_request',
          error_description: expect.stringMatching(/^too many requests; retry after \d+ s$/),
        })
        expect(locked.headers['cache-control']).toBe('no-store')
        const retryAfter = Number(locked.headers['retry-after'])
        expect(retryAfter).toBeGreaterThanOrEqual(1)
        expect(retryAfter).toBeLessThanOrEqual(60)

        // Another client is not affected, and successes are never counted.
        const other = await h.createClient(h.tenantA, ['key:read'])
        for (let n = 0; n <= LIMIT; n++) {
          expect(
            (await token(h.app, { client_id: other.clientId, client_secret: other.clientSecret }, from(90)))
              .statusCode,
          ).toBe(200)
        }
      })

      it('S-109: after N failed authentications from one IP, any client id from it is 429', async () => {
        const ip = { 'x-forwarded-for': randomIp() }
        for (let n = 1; n <= LIMIT; n++) {
          expect((await token(h.app, wrong(random('guess')), ip)).statusCode).toBe(401)
        }
        const locked = await token(
          h.app,
          { client_id: h.root.clientId, client_secret: h.root.clientSecret },
          ip,
        )
        expect(locked.statusCode).toBe(429)
        expect(Number(locked.headers['retry-after'])).toBeGreaterThanOrEqual(1)
        // The same client from another address still works.
        const elsewhere = await token(
          h.app,
          { client_id: h.root.clientId, client_secret: h.root.clientSecret },
          { 'x-forwarded-for': randomIp() },
        )
        expect(elsewhere.statusCode).toBe(200)
      })

      it('S-109: a spoofed X-Forwarded-For entry before the trusted proxy does not reset the count', async () => {
        // The proxy (loopback here) appends the address it saw; what the client wrote before it is not believed.
        const proxySaw = randomIp()
        const via = (spoofed: string) => ({ 'x-forwarded-for': `${spoofed}, ${proxySaw}` })
        for (let n = 1; n <= LIMIT; n++) {
          expect((await token(h.app, wrong(random('guess')), via(`10.9.8.${n}`))).statusCode).toBe(401)
        }
        expect((await token(h.app, wrong(random('guess')), via('10.9.8.200'))).statusCode).toBe(429)
      })
    })
  }

  it('S-109: with RATE_LIMIT_STORE=postgres two app instances on one database count failures together', async () => {
    // Two pools on PostgreSQL, as two pods have; embedded PGlite is one database per handle.
    const databases = [await testDatabase.open()]
    databases.push(
      testDatabase.name === 'postgres' ? await testDatabase.open() : (databases[0] as DatabaseHandle),
    )
    const config = testConfig({
      RATE_LIMIT_STORE: 'postgres',
      RATE_LIMIT_TOKEN_PER_MINUTE: String(LIMIT),
      KEY_ROTATION_CHECK_SECONDS: '0',
    })
    const signingKey = await deriveManagementSigningKey(config.MASTER_SECRET)
    const pods = await Promise.all(
      databases.map((database) =>
        createServer({
          logLevel: 'silent',
          ping: database.ping,
          apps: [buildManagementApp({ config, database, signingKey })],
        }),
      ),
    )
    try {
      const [a, b] = pods as [Harness['app'], Harness['app']]
      const clientId = random('shared')
      const ip = { 'x-forwarded-for': randomIp() }
      // Alternating pods: each sees only some of the failures, the database sees them all.
      for (let n = 1; n <= LIMIT; n++) {
        expect((await token(n % 2 ? a : b, wrong(clientId), ip)).statusCode).toBe(401)
      }
      // A process counts a key's first hit within 100 ms of answering it.
      await new Promise((resolve) => setTimeout(resolve, FIRST_HIT_FLUSH_MS + 400))
      expect((await token(a, wrong(clientId), ip)).statusCode).toBe(429)
      expect((await token(b, wrong(clientId), ip)).statusCode).toBe(429)
    } finally {
      await Promise.all(pods.map((pod) => pod.close()))
      await Promise.all([...new Set(databases)].map((database) => database.close()))
    }
  })
})
