import type { AddressInfo } from 'node:net'
import { createServer as createTcpServer } from 'node:net'
import { ProtocolError, RateLimitedError } from '@credential-service/core-domain'
import { createDatabase } from '@credential-service/db-schema/client'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { sql } from 'drizzle-orm'
import type { InjectOptions } from 'fastify'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createServer } from './create-server'
import { SERVICE_VERSION } from './version'

describe('createServer', () => {
  it('issue 19: a draining server still serves, /readyz answers 503 draining with Retry-After, responses close their connection', async () => {
    const app = await createServer({ logLevel: 'silent', ping: async () => true, apps: [] })
    const before = await app.inject({ url: '/' })
    expect(before.headers.connection).not.toBe('close')
    app.startDraining()
    const ready = await app.inject({ url: '/readyz' })
    expect([ready.statusCode, ready.headers['retry-after'], ready.json()]).toStrictEqual([
      503,
      '1',
      { status: 'draining' },
    ])
    const served = await app.inject({ url: '/' })
    expect([served.statusCode, served.headers.connection]).toStrictEqual([200, 'close'])
    await app.close()
  })

  it('issue 13: GET /readyz is 503 once the database is gone; GET /healthz (liveness) stays 200 without it', async () => {
    const [embedded] = testDatabases({ alone: true })
    const database = await (embedded as TestDatabase).open()
    let pings = 0
    const ping = () => {
      pings++
      return database.ping()
    }
    const app = await createServer({ logLevel: 'silent', ping, apps: [] })
    const ready = await app.inject({ url: '/readyz' })
    expect([ready.statusCode, ready.json()]).toStrictEqual([200, { status: 'ok' }])
    await database.close()
    const down = await app.inject({ url: '/readyz' })
    expect(down.statusCode).toBe(503)
    expect(down.json()).toStrictEqual({ status: 'unavailable' })
    expect(down.headers['x-service-version']).toBe(SERVICE_VERSION)
    const pingsBefore = pings
    const live = await app.inject({ url: '/healthz' })
    expect([live.statusCode, live.json()]).toStrictEqual([200, { status: 'ok' }])
    expect(live.headers['x-service-version']).toBe(SERVICE_VERSION)
    expect(pings, 'liveness must not query the database').toBe(pingsBefore)
    await app.close()
  })

  it('issue 11: a database that accepts connections but never answers: /healthz and /readyz within 1 s, /api 503 problem+json with Retry-After, protocol routes 503 temporarily_unavailable', async () => {
    const blackHole = createTcpServer((socket) => socket.resume())
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve))
    const { port } = blackHole.address() as AddressInfo
    // Default timeouts, as in production.
    const database = await createDatabase({ url: `postgres://x@127.0.0.1:${port}/x` })
    const app = await createServer({
      logLevel: 'silent',
      ping: database.ping,
      apps: [
        async (scope) => {
          scope.get('/api/probe', async () => database.db.execute(sql`select 1`))
          scope.post('/issuers/probe/token', async () => database.db.execute(sql`select 1`))
        },
      ],
    })
    const timed = async (options: InjectOptions) => {
      const started = performance.now()
      const response = await app.inject(options)
      return { response, ms: performance.now() - started }
    }
    try {
      const live = await timed({ url: '/healthz' })
      expect(live.response.statusCode).toBe(200)
      expect(live.ms).toBeLessThan(1000)
      const ready = await timed({ url: '/readyz' })
      expect(ready.response.statusCode).toBe(503)
      expect(ready.ms).toBeLessThan(1000)

      const [api, protocol] = await Promise.all([
        timed({ url: '/api/probe' }),
        timed({ method: 'POST', url: '/issuers/probe/token' }),
      ])
      // DATABASE_CONNECT_TIMEOUT_MS defaults to 3 s.
      for (const { ms } of [api, protocol]) expect(ms).toBeLessThan(5000)
      expect(api.response.statusCode).toBe(503)
      expect(api.response.headers['content-type']).toBe('application/problem+json; charset=utf-8')
      expect(api.response.headers['retry-after']).toBe('5')
      expect(api.response.json()).toStrictEqual({
        type: 'https://credential-service.dev/problems/database-unavailable',
        title: 'Service unavailable',
        status: 503,
        detail: 'the database is unavailable; retry later',
        code: 'database_unavailable',
        instance: '/api/probe',
      })
      expect(protocol.response.statusCode).toBe(503)
      expect(protocol.response.headers['retry-after']).toBe('5')
      expect(protocol.response.headers['cache-control']).toBe('no-store')
      expect(protocol.response.json()).toStrictEqual({
        error: 'temporarily_unavailable',
        error_description: 'the database is unavailable; retry later',
      })
    } finally {
      await app.close()
      await database.close()
      blackHole.close()
    }
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

  it('I-69, RFC 6749 §5.2: an error_description that echoes wallet input holds printable ASCII only, without double quote and backslash', async () => {
    const database = await (testDatabases()[0] as TestDatabase).open()
    const app = await createServer({
      logLevel: 'silent',
      ping: database.ping,
      apps: [
        async (scope) => {
          scope.post('/issuers/echo', async (request) => {
            const id = (request.body as { id: string }).id
            throw new ProtocolError('unknown_credential_configuration', `no credential configuration ‘${id}’`)
          })
        },
      ],
    })
    const response = await app.inject({
      method: 'POST',
      url: '/issuers/echo',
      payload: { id: 'pïd✓"\\\u0007\u{1F600}\nx' },
    })
    expect(response.json()).toStrictEqual({
      error: 'unknown_credential_configuration',
      error_description: "no credential configuration 'p?d?'????x'",
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

describe.each(testDatabases())('issue 11: what the logs never hold, on $name', (testDatabase) => {
  it('SQL parameters of a failed statement: neither drizzle’s message nor the server’s detail; the SQLSTATE stays', async () => {
    const database = await testDatabase.open()
    const lines: string[] = []
    const secret = `param-secret-${crypto.randomUUID()}`
    const app = await createServer({
      logLevel: 'trace',
      ping: database.ping,
      logStream: { write: (line) => void lines.push(line) },
      apps: [
        async (scope) => {
          // 22P02: the server's message quotes the value.
          scope.get('/api/cast', async () => database.db.execute(sql`select ${secret}::int`))
          // 23505: the server's detail quotes the key.
          scope.get('/issuers/duplicate', async () => {
            await database.db.execute(sql`insert into tenants (id, name) values (${secret}, 'x')`)
            await database.db.execute(sql`insert into tenants (id, name) values (${secret}, 'x')`)
          })
        },
      ],
    })
    try {
      expect((await app.inject({ url: '/api/cast' })).statusCode).toBe(500)
      expect((await app.inject({ url: '/issuers/duplicate' })).statusCode).toBe(500)
      const failures = lines
        .map((line) => JSON.parse(line) as { msg: string; err?: { cause?: { code?: string } } })
        .filter((line) => line.msg === 'unhandled error')
      expect(failures.map((line) => line.err?.cause?.code)).toStrictEqual(['22P02', '23505'])
      expect(lines.join('\n')).not.toContain(secret)
    } finally {
      await app.close()
      await database.db.execute(sql`delete from tenants where id = ${secret}`).catch(() => {})
      await database.close()
    }
  })
})

describe('issue 11: what the logs never hold', () => {
  it('issue 11: query-string secrets and capability path segments (offer and request ids) in logged URLs', async () => {
    const lines: string[] = []
    const secrets = {
      offer: `offer-${crypto.randomUUID()}`,
      request: `request-${crypto.randomUUID()}`,
      token: `token-${crypto.randomUUID()}`,
      code: `code-${crypto.randomUUID()}`,
      requestUri: `urn:ietf:params:oauth:request_uri:${crypto.randomUUID()}`,
    }
    const app = await createServer({
      logLevel: 'trace',
      ping: async () => true,
      logStream: { write: (line) => void lines.push(line) },
      apps: [],
    })
    try {
      for (const url of [
        `/issuers/t1/offers/${secrets.offer}?access_token=${secrets.token}`,
        `/verifiers/t1/requests/${secrets.request}`,
        `/verifiers/t1/responses/${secrets.request}?x=1`,
        `/issuers/t1/authorize?client_id=c&request_uri=${encodeURIComponent(secrets.requestUri)}`,
        `/issuers/t1/token?pre-authorized_code=${secrets.code}&token=${secrets.token}`,
        `/api/sessions/${secrets.offer}`,
        `/api/tenants/t1/sessions/${secrets.offer}?status=x`,
        '/api/tenants?limit=5&cursor=abc',
      ]) {
        await app.inject({ url })
      }
      const urls = lines
        .map((line) => JSON.parse(line) as { msg: string; req?: { url: string } })
        .filter((line) => line.msg === 'incoming request')
        .map((line) => line.req?.url)
      expect(urls).toStrictEqual([
        '/issuers/t1/offers/[redacted]?access_token=[redacted]',
        '/verifiers/t1/requests/[redacted]',
        '/verifiers/t1/responses/[redacted]?x=[redacted]',
        '/issuers/t1/authorize?client_id=[redacted]&request_uri=[redacted]',
        '/issuers/t1/token?pre-authorized_code=[redacted]&token=[redacted]',
        // An offer by reference is addressed by its session id.
        '/api/sessions/[redacted]',
        '/api/tenants/t1/sessions/[redacted]?status=x',
        '/api/tenants?limit=5&cursor=abc',
      ])
      const text = lines.join('\n')
      for (const secret of Object.values(secrets)) {
        expect(text).not.toContain(secret)
        expect(text).not.toContain(encodeURIComponent(secret))
      }
    } finally {
      await app.close()
    }
  })

  it('issue 11: configuration secrets, should a config object be logged', async () => {
    const lines: string[] = []
    const app = await createServer({
      logLevel: 'info',
      ping: async () => true,
      logStream: { write: (line) => void lines.push(line) },
      apps: [],
    })
    const config = {
      MASTER_SECRET: `master-${crypto.randomUUID()}`,
      AUTH_CLIENT_SECRET: `root-${crypto.randomUUID()}`,
      DATABASE_URL: `postgres://app:pw-${crypto.randomUUID()}@db/app`,
      PORT: 3000,
    }
    app.log.info({ config }, 'configuration')
    app.log.info(config, 'configuration, flat')
    await app.close()
    const text = lines.join('\n')
    for (const secret of [config.MASTER_SECRET, config.AUTH_CLIENT_SECRET, config.DATABASE_URL]) {
      expect(text).not.toContain(secret)
    }
    expect(JSON.parse(lines[0] as string).config).toStrictEqual({
      MASTER_SECRET: '[redacted]',
      AUTH_CLIENT_SECRET: '[redacted]',
      DATABASE_URL: '[redacted]',
      PORT: 3000,
    })
  })
})

describe('bounded validation issues', () => {
  it('issue 36, RFC 6749 §5.2: a protocol route’s error_description names the first 20 issues and how many more', async () => {
    const app = await createServer({
      logLevel: 'silent',
      ping: async () => true,
      apps: [
        async (scope) => {
          scope.post('/issuers/strict', { schema: { body: z.object({}).strict() } }, async () => ({}))
        },
      ],
    })
    const unknown = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`f${i}`, i]))
    const response = await app.inject({ method: 'POST', url: '/issuers/strict', payload: unknown })
    expect(response.statusCode).toBe(400)
    const listed = Array.from({ length: 20 }, (_, i) => `body.f${i}: unknown field 'f${i}'`)
    expect(response.json()).toStrictEqual({
      error: 'invalid_request',
      error_description: `${listed.join('; ')}; and 9980 more`,
    })
    await app.close()
  })
})
