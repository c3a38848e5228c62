import type { FastifyInstance } from 'fastify'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startOnDatabase } from './harness'
import { type PostgresFront, startPostgresFront } from './postgres-front'
import { type FreshDatabase, freshDatabase } from './processes'

const adminUrl = process.env.TEST_DATABASE_URL
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

type Injected = Awaited<ReturnType<FastifyInstance['inject']>>

/**
 * PostgreSQL shutting down, crashing and starting up, through real routes (issue 19 item 6):
 * SQLSTATE 57P01 (admin_shutdown) ends a statement in flight, 57P03 (cannot_connect_now) refuses
 * new connections, and a crash (57P02) ends the session. Each is a 503 with Retry-After in the
 * route's own shape, never a 500, and one warn line. The app reaches a database of its own through
 * a front (postgres-front.ts) that speaks the startup protocol as a server that is starting up.
 */
describe.skipIf(!adminUrl)('a database that shuts down, crashes or starts up (PostgreSQL)', () => {
  const logLines: string[] = []
  let database: FreshDatabase
  let front: PostgresFront
  let admin: postgres.Sql
  let started: Awaited<ReturnType<typeof startOnDatabase>>
  // A management route and a protocol route, each answering in its own shape.
  const management = () => started.management()
  const protocol = () => started.protocol()

  beforeAll(async () => {
    database = await freshDatabase()
    front = await startPostgresFront(database.url)
    admin = postgres(database.url, { max: 1, onnotice: () => {} })
    started = await startOnDatabase(front.url, logLines)
  }, 60_000)

  afterAll(async () => {
    await started?.app.close()
    await front?.close()
    await admin?.end()
    await database?.drop()
  })

  /** RFC 9110 §15.6.4, §10.2.3: 503 says when to come back; RFC 9457 on /api, RFC 6749 §5.2 elsewhere. */
  function expectUnavailable(response: Injected | undefined, shape: 'problem' | 'oauth') {
    expect(response?.statusCode).toBe(503)
    expect(response?.headers['retry-after']).toBe('5')
    if (shape === 'problem') {
      expect(response?.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(response?.json()).toStrictEqual({
        type: expect.any(String),
        title: expect.any(String),
        status: 503,
        detail: 'the database is unavailable; retry later',
        instance: '/api/tenants',
        code: 'database_unavailable',
      })
    } else {
      expect(response?.headers['cache-control']).toBe('no-store')
      expect(response?.json()).toStrictEqual({
        error: 'temporarily_unavailable',
        error_description: 'the database is unavailable; retry later',
      })
    }
  }

  interface LogLine {
    level: number
    code?: string
    msg: string
    err?: Cause
  }
  type Cause = { code?: string; cause?: Cause }

  /** The warn lines (pino level 40) logged since `from`. */
  const warnings = (from: number) =>
    logLines
      .slice(from)
      .map((line) => JSON.parse(line) as LogLine)
      .filter((line) => line.level === 40)

  /** The driver codes in a logged error's cause chain. */
  const causeCodes = (err: Cause | undefined): string[] =>
    err ? [...(err.code ? [err.code] : []), ...causeCodes(err.cause)] : []

  /**
   * Runs both requests while every table is locked by an admin transaction, so that their
   * statements wait in the server; `interrupt` then ends them (given the admin connection, which
   * the lock holds); the lock is released after.
   */
  async function whileWaiting(interrupt: (sql: postgres.Sql) => Promise<void>) {
    const locker = await admin.reserve()
    try {
      await locker`begin`
      const [{ tables }] = (await locker`
        select string_agg(format('%I.%I', schemaname, tablename), ', ') as tables
        from pg_tables where schemaname = 'public'`) as unknown as [{ tables: string }]
      await locker.unsafe(`lock table ${tables} in access exclusive mode`)
      const answers = Promise.all([management(), protocol()])
      // Both of the pool's connections are waiting for the lock.
      let waiting = 0
      for (let attempt = 0; attempt < 100 && waiting < 2; attempt++) {
        await sleep(50)
        const [row] = await locker`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`
        waiting = (row?.n as number) ?? 0
      }
      expect(waiting).toBe(2)
      await interrupt(locker)
      return await answers
    } finally {
      await locker`rollback`.catch(() => {})
      locker.release()
    }
  }

  /**
   * Sends one request at a time, past the pool's reconnect delay (at most 1 s), alternating the
   * shapes: every answer is a 503 with one warn line. Stops after `rounds`, or once each shape was
   * answered by a request whose line names `sqlstate`; returns which shapes were.
   */
  async function whileUnavailable(rounds: number, sqlstate?: string) {
    const seen = { problem: false, oauth: false }
    for (let round = 0; round < rounds && !(seen.problem && seen.oauth); round++) {
      await sleep(1200)
      const shape = round % 2 === 0 ? 'problem' : 'oauth'
      const from = logLines.length
      expectUnavailable(await (shape === 'problem' ? management() : protocol()), shape)
      const lines = warnings(from)
      // One line per refused request, at warn, whatever ended it.
      expect(lines, JSON.stringify(lines)).toHaveLength(1)
      expect(lines[0]?.code).toBe('database_unavailable')
      if (sqlstate && lines[0]?.msg.includes(`(SQLSTATE ${sqlstate})`)) seen[shape] = true
    }
    return seen
  }

  async function expectRecovered() {
    let status = 0
    for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
      status = (await management()).statusCode
      if (status !== 200) await sleep(200)
    }
    expect(status).toBe(200)
    expect((await protocol()).statusCode).toBe(400)
  }

  it('pg_terminate_backend during a statement (SQLSTATE 57P01 admin_shutdown): 503 with Retry-After, not 500', async () => {
    const from = logLines.length
    const [managementAnswer, protocolAnswer] = await whileWaiting(async (sql) => {
      await sql`
        select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`
    })
    expectUnavailable(managementAnswer, 'problem')
    expectUnavailable(protocolAnswer, 'oauth')
    // One line per request, at warn. postgres.js 3.4 keeps a FATAL that arrives during a query
    // only until ReadyForQuery, which never comes: the query fails as CONNECTION_CLOSED.
    const lines = warnings(from)
    expect(lines.map(({ level, code, msg }) => ({ level, code, msg }))).toStrictEqual([
      { level: 40, code: 'database_unavailable', msg: 'the database is unavailable; retry later' },
      { level: 40, code: 'database_unavailable', msg: 'the database is unavailable; retry later' },
    ])
    expect(lines.map((line) => causeCodes(line.err))).toStrictEqual([
      ['CONNECTION_CLOSED'],
      ['CONNECTION_CLOSED'],
    ])
    await expectRecovered()
  }, 60_000)

  it('a server starting up (SQLSTATE 57P03 cannot_connect_now): 503 with Retry-After and a warn line naming it', async () => {
    // A restart: a fast shutdown ends every session (57P01), then the starting server refuses.
    front.refuse('the database system is starting up')
    front.shutDown()
    try {
      // What the operator reads: the server's refusal, named.
      expect(await whileUnavailable(12, '57P03')).toStrictEqual({ problem: true, oauth: true })
    } finally {
      front.refuse(undefined)
    }
    await expectRecovered()
  }, 60_000)

  it('a crash (57P02 crash_shutdown, a WARNING notice, then EOF) ends statements in flight, then recovery refuses (57P03): 503 throughout', async () => {
    const [managementAnswer, protocolAnswer] = await whileWaiting(async () => {
      front.refuse('the database system is in recovery mode')
      front.crash()
    })
    try {
      expectUnavailable(managementAnswer, 'problem')
      expectUnavailable(protocolAnswer, 'oauth')
      // While the server recovers. After a crash the pool was seen to give up waiting for a
      // connection (POOL_TIMEOUT) rather than meet the refusal, so the line need not name 57P03.
      await whileUnavailable(2)
    } finally {
      front.refuse(undefined)
    }
    await expectRecovered()
  }, 60_000)
})
