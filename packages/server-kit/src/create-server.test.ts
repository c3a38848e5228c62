import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { describe, expect, it } from 'vitest'
import { createServer } from './create-server'
import { SERVICE_VERSION } from './version'

describe('createServer', () => {
  it('issue 13: GET /readyz is 503 once the database is gone; GET /healthz (liveness) stays 200 without it', async () => {
    const [embedded] = testDatabases()
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
})
