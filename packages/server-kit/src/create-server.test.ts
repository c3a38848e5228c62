import { RateLimitedError } from '@credential-service/core-domain'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { describe, expect, it } from 'vitest'
import { createServer } from './create-server'
import { SERVICE_VERSION } from './version'

describe('createServer', () => {
  it('GET /healthz is 503 once the database is gone', async () => {
    const [embedded] = testDatabases()
    const database = await (embedded as TestDatabase).open()
    const app = await createServer({ logLevel: 'silent', ping: database.ping, apps: [] })
    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200)
    await database.close()
    const down = await app.inject({ url: '/healthz' })
    expect(down.statusCode).toBe(503)
    expect(down.json()).toStrictEqual({ status: 'unavailable' })
    expect(down.headers['x-service-version']).toBe(SERVICE_VERSION)
    await app.close()
  })

  it('an unexpected fault is a generic 500: the message is logged, never echoed', async () => {
    const database = await (testDatabases()[0] as TestDatabase).open()
    const app = await createServer({
      logLevel: 'silent',
      ping: database.ping,
      apps: [
        async (scope) => {
          scope.get('/api/boom', async () => {
            throw new Error('connection string postgres://user:hunter2@db')
          })
          scope.get('/issuers/boom', async () => {
            throw new Error('internal detail hunter2')
          })
        },
      ],
    })
    const api = await app.inject({ url: '/api/boom' })
    expect(api.statusCode).toBe(500)
    expect(api.json().code).toBe('internal_error')
    expect(api.body).not.toContain('hunter2')
    const protocol = await app.inject({ url: '/issuers/boom' })
    expect(protocol.json()).toStrictEqual({
      error: 'server_error',
      error_description: 'an unexpected error occurred',
    })
    await app.close()
    await database.close()
  })

  it('RFC 6585 §4: a rate-limit refusal is 429 with Retry-After: problem+json rate_limited on /api, OAuth JSON elsewhere', async () => {
    const database = await (testDatabases()[0] as TestDatabase).open()
    const app = await createServer({
      logLevel: 'silent',
      ping: database.ping,
      apps: [
        async (scope) => {
          scope.get('/api/limited', async () => {
            throw new RateLimitedError(41.2)
          })
          scope.get('/issuers/limited', async () => {
            throw new RateLimitedError(0)
          })
        },
      ],
    })
    const api = await app.inject({ url: '/api/limited' })
    expect(api.statusCode).toBe(429)
    expect(api.headers['content-type']).toBe('application/problem+json; charset=utf-8')
    expect(api.headers['retry-after']).toBe('42')
    expect(api.json()).toStrictEqual({
      type: 'https://credential-service.dev/problems/rate-limited',
      title: 'Too many requests',
      status: 429,
      detail: 'too many requests; retry after 42 s',
      code: 'rate_limited',
      instance: '/api/limited',
    })
    const protocol = await app.inject({ url: '/issuers/limited' })
    expect(protocol.statusCode).toBe(429)
    expect(protocol.headers['retry-after']).toBe('1')
    expect(protocol.headers['cache-control']).toBe('no-store')
    expect(protocol.json()).toStrictEqual({
      error: 'invalid_request',
      error_description: 'too many requests; retry after 1 s',
    })
    await app.close()
    await database.close()
  })

  it('issue 11: X-Forwarded-For is believed from a private-network proxy only, and only the hop it added', async () => {
    const database = await (testDatabases()[0] as TestDatabase).open()
    const app = await createServer({
      logLevel: 'silent',
      ping: database.ping,
      apps: [async (scope) => void scope.get('/issuers/ip', async (request) => ({ ip: request.ip }))],
    })
    const ipOf = async (remoteAddress: string, forwarded: string) =>
      (
        await app.inject({ url: '/issuers/ip', remoteAddress, headers: { 'x-forwarded-for': forwarded } })
      ).json().ip
    // An ingress on the pod network appended the address it saw; what the client wrote is ignored.
    expect(await ipOf('10.1.2.3', '6.6.6.6, 203.0.113.5')).toBe('203.0.113.5')
    // A client on the internet cannot name itself.
    expect(await ipOf('198.51.100.20', '203.0.113.5')).toBe('198.51.100.20')
    await app.close()
    await database.close()
  })

  it('at warn level a request logs nothing until it fails; the failure line carries reqId, redacted', async () => {
    const database = await (testDatabases()[0] as TestDatabase).open()
    const lines: Record<string, unknown>[] = []
    const app = await createServer({
      logLevel: 'warn',
      ping: database.ping,
      logStream: { write: (line) => lines.push(JSON.parse(line)) },
      apps: [
        async (scope) => {
          scope.get('/issuers/quiet', async (request) => {
            request.log.info('not at warn level')
            return { ok: true }
          })
          scope.get('/issuers/loud', async (request) => {
            request.log.warn({ clientSecret: 'hunter2' }, 'something to see')
            throw new Error('boom')
          })
        },
      ],
    })
    expect((await app.inject({ url: '/issuers/quiet' })).statusCode).toBe(200)
    expect(lines).toStrictEqual([])
    const failed = await app.inject({ url: '/issuers/loud' })
    expect(failed.statusCode).toBe(500)
    expect(lines.map((line) => line.msg)).toStrictEqual(['something to see', 'unhandled error'])
    for (const line of lines) expect(line.reqId).toMatch(/^req_/)
    expect(lines[0]?.clientSecret).toBe('[redacted]')
    await app.close()
    await database.close()
  })

  it('issue 13: a well-formed X-Request-Id is kept, logged and returned on every answer; others are replaced', async () => {
    const database = await (testDatabases()[0] as TestDatabase).open()
    const lines: Record<string, unknown>[] = []
    const app = await createServer({
      logLevel: 'info',
      ping: database.ping,
      logStream: { write: (line) => lines.push(JSON.parse(line)) },
      apps: [
        async (scope) => {
          scope.get('/api/boom', async () => {
            throw new Error('boom')
          })
        },
      ],
    })
    const given = '4bf92f3577b34da6a3ce929d0e0e4736'
    for (const url of ['/', '/api/boom', '/issuers/missing', '/api/missing']) {
      const answer = await app.inject({ url, headers: { 'x-request-id': given } })
      expect(answer.headers['x-request-id']).toBe(given)
    }
    expect(lines.filter((line) => line.reqId !== undefined).every((line) => line.reqId === given)).toBe(true)
    expect(lines.some((line) => line.msg === 'unhandled error')).toBe(true)
    for (const bad of ['a b', 'x'.repeat(129), '{"level":60}', '']) {
      const answer = await app.inject({ url: '/', headers: { 'x-request-id': bad } })
      expect(answer.headers['x-request-id']).toMatch(/^req_[A-Za-z0-9_-]+$/)
    }
    const generated = await app.inject({ url: '/' })
    expect(generated.headers['x-request-id']).toMatch(/^req_/)
    await app.close()
    await database.close()
  })
})
