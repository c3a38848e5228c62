import { randomBytes } from 'node:crypto'
import { FIRST_HIT_FLUSH_MS } from '@credential-service/server-kit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientToken, type ServiceProcess, startDeployment } from './processes'

const databaseUrl = process.env.TEST_DATABASE_URL
const LIMIT = 3

/** An address of its own per test (a /64 of the documentation prefix): counters outlive a run. */
const randomIp = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::7`

/** The issuer's wallet endpoints, each with what it answers under the limit and the code over it. */
const endpoints = {
  nonce: { path: 'nonce', body: undefined, allowed: 200, error: 'invalid_request' },
  credential: {
    path: 'credential',
    body: { credential_configuration_id: 'pid' },
    allowed: 401,
    // OpenID4VCI 1.0 §8.3.1.2, §9.3: the credential endpoints' own code, never invalid_request.
    error: 'invalid_credential_request',
  },
  deferred: {
    path: 'deferred-credential',
    body: { transaction_id: 'x' },
    allowed: 401,
    error: 'invalid_credential_request',
  },
  notification: {
    path: 'notification',
    body: { notification_id: 'x', event: 'credential_accepted' },
    allowed: 401,
    error: 'invalid_request',
  },
}

/**
 * Issue 19 item 5: two issuer processes on one PostgreSQL database, as two replicas behind a
 * proxy, with no RATE_LIMIT_STORE: with DATABASE_URL the shared store is the default, so one
 * address is counted once across both. The processes believe X-Forwarded-For from loopback
 * (TRUST_PROXY's default), as from an ingress on the pod network.
 */
describe.runIf(databaseUrl)('wallet rate limits across two issuer processes (PostgreSQL)', () => {
  const root = { id: `root-${crypto.randomUUID()}`, secret: 'rate-limit-processes-root-secret-0123456789' }
  const processes: ServiceProcess[] = []
  let issuers: [ServiceProcess, ServiceProcess]
  const tenant = `rlp-${randomBytes(4).toString('hex')}`

  beforeAll(async () => {
    const issuer = { app: 'issuer', env: { RATE_LIMIT_WALLET_PER_MINUTE: String(LIMIT) } }
    processes.push(...(await startDeployment(databaseUrl as string, root, ['management', issuer, issuer])))
    const [management, a, b] = processes as [ServiceProcess, ServiceProcess, ServiceProcess]
    issuers = [a, b]

    const access_token = await clientToken(management.origin, root.id, root.secret)
    const created = await fetch(`${management.origin}/api/tenants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${access_token}` },
      body: JSON.stringify({ id: tenant, name: tenant }),
    })
    expect(created.status, await created.text()).toBe(201)
  }, 120_000)

  afterAll(() => Promise.all(processes.map((p) => p.stop())))

  const send = (issuer: ServiceProcess, name: keyof typeof endpoints, ip: string) => {
    const { path, body } = endpoints[name]
    return fetch(`${issuer.origin}/issuers/${tenant}/${path}`, {
      method: 'POST',
      headers: {
        'x-forwarded-for': ip,
        ...(body ? { 'content-type': 'application/json', authorization: 'Bearer made-up' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    })
  }

  for (const name of Object.keys(endpoints) as (keyof typeof endpoints)[]) {
    it(`S-126: requests to the ${name} endpoint alternating between the processes count together; N+1 is 429 on both`, async () => {
      const ip = randomIp()
      for (let n = 1; n <= LIMIT; n++) {
        const response = await send(issuers[n % 2] as ServiceProcess, name, ip)
        expect(response.status, `request ${n}`).toBe(endpoints[name].allowed)
      }
      // A process answers a key's first hit before counting it, and counts it within 100 ms.
      await new Promise((resolve) => setTimeout(resolve, FIRST_HIT_FLUSH_MS + 400))
      for (const issuer of issuers) {
        const response = await send(issuer, name, ip)
        expect(response.status, issuer.origin).toBe(429)
        expect(await response.json()).toStrictEqual({
          error: endpoints[name].error,
          error_description: expect.stringMatching(/^too many requests; retry after \d+ s$/),
        })
        const retryAfter = Number(response.headers.get('retry-after'))
        expect(retryAfter).toBeGreaterThanOrEqual(1)
        expect(retryAfter).toBeLessThanOrEqual(60)
      }
      // Another address is still answered by either process.
      expect((await send(issuers[0], name, randomIp())).status).toBe(endpoints[name].allowed)
    })
  }
})
