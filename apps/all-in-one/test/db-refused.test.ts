import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startOnDatabase } from './harness'

const adminUrl = process.env.TEST_DATABASE_URL

/**
 * PostgreSQL refusing new connections, through real routes: a database closed to connections
 * (ALLOW_CONNECTIONS false: SQLSTATE 55000) and a role out of connections (CONNECTION LIMIT:
 * 53300, as a server at max_connections answers). Both are 503 with Retry-After, never a 500.
 * A database and a non-superuser role of this test's own (superusers ignore connection limits).
 */
describe.skipIf(!adminUrl)('a database that refuses connections (PostgreSQL)', () => {
  const name = `cs_refused_${crypto.randomUUID().slice(0, 8)}`
  const admin = postgres(adminUrl as string, { max: 1, onnotice: () => {} })
  const logLines: string[] = []
  let started: Awaited<ReturnType<typeof startOnDatabase>>
  // A management route and a protocol route, each answering in its own shape.
  const requests = [() => started.management(), () => started.protocol()]

  beforeAll(async () => {
    await admin.unsafe(`create role ${name} login`)
    await admin.unsafe(`create database ${name} owner ${name}`)
    const url = new URL(adminUrl as string)
    url.username = name
    url.password = ''
    url.pathname = `/${name}`
    started = await startOnDatabase(url.toString(), logLines)
  }, 60_000)

  afterAll(async () => {
    await started?.app.close()
    await admin.unsafe(`drop database if exists ${name} with (force)`)
    await admin.unsafe(`drop role if exists ${name}`)
    await admin.end()
  })

  /** Refuses new connections with `refuse`, ends the pool's open ones, and restores with `restore`. */
  async function whileRefused(refuse: string, restore: string, sqlstate: string) {
    await admin.unsafe(refuse)
    try {
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name}`
      logLines.length = 0
      // The first queries meet the ended connections (CONNECTION_CLOSED, ECONNRESET) or wait out
      // the reconnect (POOL_TIMEOUT). A query that opens a connection itself meets the refusal:
      // one request at a time, past the reconnect delay (at most 1 s), until a route saw it.
      const refused = () => logLines.filter((line) => line.includes(`(SQLSTATE ${sqlstate})`))
      for (let round = 0; round < 10 && refused().length === 0; round++) {
        await new Promise((resolve) => setTimeout(resolve, 1200))
        const response = await requests[round % 2]?.()
        expect(response?.statusCode).toBe(503)
        expect(response?.headers['retry-after']).toBe('5')
        expect(response?.json()).toMatchObject(
          round % 2 === 0
            ? { status: 503, code: 'database_unavailable' }
            : { error: 'temporarily_unavailable' },
        )
      }
      // One line an operator can act on, at warn (40).
      expect(refused().length).toBeGreaterThan(0)
      expect(JSON.parse(refused()[0] as string)).toMatchObject({ level: 40, code: 'database_unavailable' })
    } finally {
      await admin.unsafe(restore)
    }
    // And the service recovers on its own.
    let status = 0
    for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
      status = (await started.management()).statusCode
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(status).toBe(200)
  }

  it('ALLOW_CONNECTIONS false (SQLSTATE 55000): 503 with Retry-After, not 500', async () => {
    await whileRefused(
      `alter database ${name} with allow_connections false`,
      `alter database ${name} with allow_connections true`,
      '55000',
    )
  }, 60_000)

  it('too many connections (SQLSTATE 53300): 503 with Retry-After and a log line naming the budget', async () => {
    await whileRefused(
      `alter role ${name} connection limit 0`,
      `alter role ${name} connection limit -1`,
      '53300',
    )
    expect(logLines.some((line) => line.includes('DATABASE_POOL_SIZE'))).toBe(true)
  }, 60_000)
})
