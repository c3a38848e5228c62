import { TEST_MASTER_SECRET } from '@credential-service/db-schema/testing'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { startOnDatabase } from './harness'
import { startPostgresFront } from './postgres-front'
import { type ServiceProcess, startProcess } from './processes'

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

/**
 * Issue 36: a process that starts before PostgreSQL answers (a pod scheduled before the database,
 * or during its restart) waits for it, one line per attempt, for DATABASE_STARTUP_TIMEOUT_SECONDS;
 * then it exits 1 with one line. Real processes, and the database's port opened late by a front.
 */
describe.skipIf(!adminUrl)('a database not reachable yet at start (PostgreSQL, processes)', () => {
  const started: ServiceProcess[] = []
  afterAll(() => Promise.all(started.map((p) => p.stop())))

  /** TEST_DATABASE_URL at a port nothing listens on yet. */
  async function unreachable(): Promise<{ url: string; port: number }> {
    const port = await freePort()
    const url = new URL(adminUrl as string)
    url.hostname = '127.0.0.1'
    url.port = String(port)
    return { url: url.href, port }
  }

  async function start(databaseUrl: string, timeoutSeconds: string) {
    const p = await startProcess('issuer', {
      DATABASE_URL: databaseUrl,
      MASTER_SECRET: TEST_MASTER_SECRET,
      DATABASE_STARTUP_TIMEOUT_SECONDS: timeoutSeconds,
    })
    started.push(p)
    return p
  }

  const lines = (p: ServiceProcess) => p.stderr().split('\n').filter(Boolean)

  async function until(check: () => boolean, what: string) {
    for (let waited = 0; !check(); waited += 100) {
      if (waited > 30_000) throw new Error(`timed out waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  it('issue 36: waits for the database, one line per attempt, and becomes ready once it answers', async () => {
    const { url, port } = await unreachable()
    const p = await start(url, '60')
    await until(() => lines(p).length >= 2, 'two attempts')
    const front = await startPostgresFront(adminUrl as string, { port })
    try {
      expect(await p.ready(), p.stderr()).toBe(200)
      const attempts = lines(p)
      for (const [n, line] of attempts.entries()) {
        expect(line).toMatch(
          new RegExp(
            `^issuer: the database at 127\\.0\\.0\\.1:${port}/\\S+ does not answer \\(attempt ${n + 1}\\): .*\\(ECONNREFUSED\\); retrying in \\d+\\.\\d s$`,
          ),
        )
      }
    } finally {
      await p.stop()
      await front.close()
    }
  }, 60_000)

  it('issue 36: past DATABASE_STARTUP_TIMEOUT_SECONDS it exits 1 with one clear line, no stack trace', async () => {
    const { url, port } = await unreachable()
    const p = await start(url, '2')
    await until(() => p.exitCode() !== null, 'the exit')
    expect(p.exitCode()).toBe(1)
    const all = lines(p)
    expect(all.length, p.stderr()).toBeGreaterThanOrEqual(2)
    expect(all.slice(0, -1).every((line) => line.includes('does not answer (attempt'))).toBe(true)
    expect(all.at(-1)).toMatch(
      new RegExp(
        `^issuer: the database at 127\\.0\\.0\\.1:${port}/\\S+ did not answer within 2 s \\(DATABASE_STARTUP_TIMEOUT_SECONDS\\): .*\\(ECONNREFUSED\\); exiting$`,
      ),
    )
    expect(p.stderr()).not.toMatch(/^\s+at /m)
  }, 60_000)

  it('issue 36: a database that does not exist is not waited for: one line, exit 1', async () => {
    const url = new URL(adminUrl as string)
    url.pathname = `/cs_missing_${crypto.randomUUID().slice(0, 8)}`
    const p = await start(url.href, '60')
    await until(() => p.exitCode() !== null, 'the exit')
    expect(p.exitCode()).toBe(1)
    expect(lines(p)).toStrictEqual([
      expect.stringMatching(/^issuer: the database at \S+\/cs_missing_\w+ refused: .*\(3D000\)$/),
    ])
  }, 60_000)
})
