import { randomBytes } from 'node:crypto'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { TEST_MASTER_SECRET, testDatabases } from '@credential-service/db-schema/testing'
import { parseManagementConfig } from '@credential-service/management'
import { createServer, FIRST_HIT_FLUSH_MS } from '@credential-service/server-kit'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { composeApps } from '../src/compose'
import { bearer, startAllInOne } from './harness'

const LIMIT = 3
const BURST = 50

/**
 * A public address of its own (a random /64 of the documentation prefix): counters in a shared
 * PostgreSQL test database outlive a run by up to a minute.
 */
const randomIp = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::9`

async function createTenant(app: FastifyInstance, root: { id: string; secret: string }) {
  const id = `rl-${randomBytes(4).toString('hex')}`
  const response = await app.inject({
    method: 'POST',
    url: '/api/tenants',
    headers: await bearer(app, root.id, root.secret),
    payload: { id, name: id },
  })
  if (response.statusCode !== 201) throw new Error(`tenant: ${response.body}`)
  return id
}

/** The wallet endpoints anyone may call, each as a request from `ip`. */
const endpoints = {
  nonce: (tenant: string, ip: string) => ({
    method: 'POST' as const,
    url: `/issuers/${tenant}/nonce`,
    headers: { 'x-forwarded-for': ip },
  }),
  token: (tenant: string, ip: string) => ({
    method: 'POST' as const,
    url: `/issuers/${tenant}/token`,
    headers: { 'x-forwarded-for': ip },
    payload: {
      grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
      'pre-authorized_code': randomBytes(16).toString('base64url'),
    },
  }),
  offer: (tenant: string, ip: string) => ({
    method: 'GET' as const,
    url: `/issuers/${tenant}/offers/${randomBytes(8).toString('hex')}`,
    headers: { 'x-forwarded-for': ip },
  }),
  // Issue 19: the endpoints behind a token, and the verifier's response endpoint, limited too.
  credential: (tenant: string, ip: string) => ({
    method: 'POST' as const,
    url: `/issuers/${tenant}/credential`,
    headers: { 'x-forwarded-for': ip, authorization: 'Bearer made-up' },
    payload: { credential_configuration_id: 'pid' },
  }),
  deferred: (tenant: string, ip: string) => ({
    method: 'POST' as const,
    url: `/issuers/${tenant}/deferred-credential`,
    headers: { 'x-forwarded-for': ip, authorization: 'Bearer made-up' },
    payload: { transaction_id: 'x' },
  }),
  notification: (tenant: string, ip: string) => ({
    method: 'POST' as const,
    url: `/issuers/${tenant}/notification`,
    headers: { 'x-forwarded-for': ip, authorization: 'Bearer made-up' },
    payload: { notification_id: 'x', event: 'credential_accepted' },
  }),
  response: (tenant: string, ip: string) => ({
    method: 'POST' as const,
    url: `/verifiers/${tenant}/responses/${randomBytes(8).toString('hex')}`,
    headers: { 'x-forwarded-for': ip, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'response=made-up',
  }),
}
/** What each endpoint answers under the limit (codes, tokens and ids are made up). */
const allowed = {
  nonce: 200,
  token: 400,
  offer: 404,
  credential: 401,
  deferred: 401,
  notification: 401,
  response: 400,
}
/** OpenID4VCI 1.0 §8.3.1.2, §9.3: the credential endpoints' own code, never invalid_request. */
const limitedError = (name: keyof typeof endpoints) =>
  name === 'credential' || name === 'deferred' ? 'invalid_credential_request' : 'invalid_request'

function expectRateLimited(
  response: Awaited<ReturnType<FastifyInstance['inject']>>,
  error = 'invalid_request',
) {
  expect(response.statusCode).toBe(429)
  expect(response.json()).toStrictEqual({
    error,
    error_description: expect.stringMatching(/^too many requests; retry after \d+ s$/),
  })
  expect(response.headers['cache-control']).toBe('no-store')
  const retryAfter = Number(response.headers['retry-after'])
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(60)
}

describe.each(testDatabases())('wallet endpoint rate limits on $name', (testDatabase) => {
  for (const store of ['memory', 'postgres'] as const) {
    describe(`RATE_LIMIT_STORE=${store}`, () => {
      let app: FastifyInstance
      let tenant: string
      let otherTenant: string
      beforeAll(async () => {
        const started = await startAllInOne(testDatabase, undefined, {
          RATE_LIMIT_STORE: store,
          RATE_LIMIT_WALLET_PER_MINUTE: String(LIMIT),
        })
        app = started.app
        const root = { id: started.rootClientId, secret: started.rootSecret }
        tenant = await createTenant(app, root)
        otherTenant = await createTenant(app, root)
      })
      afterAll(() => app.close())

      for (const name of Object.keys(endpoints) as (keyof typeof endpoints)[]) {
        it(`S-126, S-34: request N+1 from one IP to the ${name} endpoint is 429 with Retry-After`, async () => {
          const ip = randomIp()
          const error = limitedError(name)
          for (let n = 1; n <= LIMIT; n++) {
            expect((await app.inject(endpoints[name](tenant, ip))).statusCode).toBe(allowed[name])
          }
          expectRateLimited(await app.inject(endpoints[name](tenant, ip)), error)
          // Per IP (any tenant), per endpoint: another address, and another endpoint, still answer.
          expectRateLimited(await app.inject(endpoints[name](otherTenant, ip)), error)
          expect((await app.inject(endpoints[name](tenant, randomIp()))).statusCode).toBe(allowed[name])
          const another = name === 'nonce' ? 'offer' : 'nonce'
          expect((await app.inject(endpoints[another](tenant, ip))).statusCode).toBe(allowed[another])
        })
      }

      // Issue 19: a burst of bad requests to these endpoints was all answered 400/401.
      for (const name of ['credential', 'deferred', 'notification', 'response'] as const) {
        it(`S-126: a burst of ${BURST} parallel bad requests to the ${name} endpoint: N answered, the rest 429`, async () => {
          const ip = randomIp()
          const responses = await Promise.all(
            Array.from({ length: BURST }, () => app.inject(endpoints[name](tenant, ip))),
          )
          const statuses = responses.map((response) => response.statusCode)
          expect(statuses.filter((status) => status === allowed[name])).toHaveLength(LIMIT)
          expect(statuses.filter((status) => status === 429)).toHaveLength(BURST - LIMIT)
          for (const response of responses.filter((response) => response.statusCode === 429)) {
            expectRateLimited(response, limitedError(name))
          }
        })
      }

      it('S-126: a refused request is refused before its body is read (a malformed body is still 429)', async () => {
        const ip = randomIp()
        for (let n = 1; n <= LIMIT; n++) await app.inject(endpoints.token(tenant, ip))
        const response = await app.inject({
          ...endpoints.token(tenant, ip),
          payload: '{"grant_type": ',
          headers: { 'x-forwarded-for': ip, 'content-type': 'application/json' },
        })
        expectRateLimited(response)
      })
    })
  }

  describe('RATE_LIMIT_WALLET_TENANT_PER_MINUTE', () => {
    let app: FastifyInstance
    let tenant: string
    let otherTenant: string
    beforeAll(async () => {
      const started = await startAllInOne(testDatabase, undefined, {
        RATE_LIMIT_WALLET_TENANT_PER_MINUTE: String(LIMIT),
      })
      app = started.app
      const root = { id: started.rootClientId, secret: started.rootSecret }
      tenant = await createTenant(app, root)
      otherTenant = await createTenant(app, root)
    })
    afterAll(() => app.close())

    it('S-34: a tenant limit counts every IP together, and no other tenant', async () => {
      for (let n = 1; n <= LIMIT; n++) {
        expect((await app.inject(endpoints.token(tenant, randomIp()))).statusCode).toBe(400)
      }
      expectRateLimited(await app.inject(endpoints.token(tenant, randomIp())))
      expect((await app.inject(endpoints.token(otherTenant, randomIp()))).statusCode).toBe(400)
    })
  })

  it('S-126: with RATE_LIMIT_STORE=postgres two instances on one database count together', async () => {
    // Two pools on PostgreSQL, as two pods have; embedded PGlite is one database per handle.
    const databases: DatabaseHandle[] = [await testDatabase.open()]
    databases.push(
      testDatabase.name === 'postgres' ? await testDatabase.open() : (databases[0] as DatabaseHandle),
    )
    const config = parseManagementConfig({
      PUBLIC_URL: 'http://localhost:3000',
      MASTER_SECRET: TEST_MASTER_SECRET,
      AUTH_CLIENT_ID: `root-${crypto.randomUUID()}`,
      AUTH_CLIENT_SECRET: `secret-${crypto.randomUUID()}`,
      RATE_LIMIT_STORE: 'postgres',
      RATE_LIMIT_WALLET_PER_MINUTE: String(LIMIT),
    })
    const pods: FastifyInstance[] = []
    try {
      for (const database of databases) {
        pods.push(
          await createServer({
            logLevel: 'silent',
            ping: database.ping,
            apps: await composeApps(config, database),
          }),
        )
      }
      const [a, b] = pods as [FastifyInstance, FastifyInstance]
      const root = { id: config.AUTH_CLIENT_ID as string, secret: config.AUTH_CLIENT_SECRET as string }
      const tenant = await createTenant(a, root)
      const ip = randomIp()
      // Alternating pods: each sees only some of the requests, the database sees them all.
      for (let n = 1; n <= LIMIT; n++) {
        expect((await (n % 2 ? a : b).inject(endpoints.nonce(tenant, ip))).statusCode).toBe(200)
      }
      // A pod answers a key's first hit before counting it, and counts it within 100 ms.
      await new Promise((resolve) => setTimeout(resolve, FIRST_HIT_FLUSH_MS + 400))
      expectRateLimited(await a.inject(endpoints.nonce(tenant, ip)))
      expectRateLimited(await b.inject(endpoints.nonce(tenant, ip)))
    } finally {
      await Promise.all(pods.map((pod) => pod.close()))
      await Promise.all([...new Set(databases)].map((database) => database.close()))
    }
  })
})
