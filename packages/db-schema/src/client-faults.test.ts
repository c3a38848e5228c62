import { createServer, connect as netConnect, type Server, type Socket } from 'node:net'
import { sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import { afterEach, describe, expect, it } from 'vitest'
import { createDatabase, type DatabaseHandle, type DatabaseOptions } from './client'
import { withQueryDeadlines } from './query-deadline'
import { testDatabases } from './testing'
import { isDatabaseUnavailable } from './unavailable'

const postgresUrl = process.env.TEST_DATABASE_URL
const opened: DatabaseHandle[] = []
const servers: Server[] = []

afterEach(async () => {
  await Promise.all(opened.splice(0).map((database) => database.close().catch(() => {})))
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))))
})

async function open(options: DatabaseOptions): Promise<DatabaseHandle> {
  const database = await createDatabase(options)
  opened.push(database)
  return database
}

/** How long `promise` takes to reject, and with what. */
async function rejection(promise: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now()
  try {
    await promise
  } catch (error) {
    return { error, ms: performance.now() - started }
  }
  throw new Error('expected a rejection')
}

const codeOf = (error: unknown): unknown => {
  for (let current = error as { code?: unknown; cause?: unknown } | undefined; current; ) {
    if (typeof current.code === 'string') return current.code
    current = current.cause as typeof current
  }
  return undefined
}

async function listening(server: Server): Promise<number> {
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as { port: number }).port
}

/**
 * A TCP hop in front of a real PostgreSQL that can go silent, as a partitioned network or a hung
 * server does: the sockets stay open, nothing reaches the other side any more.
 */
async function silentableProxy(target: URL) {
  let silent = false
  const sockets = new Set<Socket>()
  const server = createServer((inbound) => {
    sockets.add(inbound)
    if (silent) return
    const outbound = netConnect(Number(target.port || 5432), target.hostname)
    sockets.add(outbound)
    inbound.on('data', (chunk) => silent || outbound.write(chunk))
    outbound.on('data', (chunk) => silent || inbound.write(chunk))
    for (const [a, b] of [
      [inbound, outbound],
      [outbound, inbound],
    ] as const) {
      a.on('error', () => b.destroy())
      a.on('close', () => b.destroy())
    }
  })
  const port = await listening(server)
  const url = new URL(target)
  url.port = String(port)
  return {
    url: url.toString(),
    goSilent: () => {
      silent = true
    },
    /** The network is back; the connections that lost data in between are reset. */
    restore: () => {
      silent = false
      for (const socket of sockets) socket.destroy()
      sockets.clear()
    },
  }
}

describe('PostgreSQL faults', () => {
  it('issue 11: a server that accepts but never answers fails the query after DATABASE_CONNECT_TIMEOUT_MS, as unavailable', async () => {
    const blackHole = createServer((socket) => socket.resume())
    const port = await listening(blackHole)
    const database = await open({ url: `postgres://x@127.0.0.1:${port}/x`, connectTimeoutMs: 300 })
    const { error, ms } = await rejection(database.db.execute(sql`select 1`))
    expect(isDatabaseUnavailable(error)).toBe(true)
    expect(ms).toBeLessThan(2000)
    const started = performance.now()
    expect(await database.ping()).toBe(false)
    expect(performance.now() - started).toBeLessThan(1000)
    // Let the driver's own connect timeout close the socket; end() would wait its grace period.
    await new Promise((resolve) => setTimeout(resolve, 400))
  })

  it('issue 11: a refused connection fails fast, as unavailable', async () => {
    const closed = createServer()
    const port = await listening(closed)
    await new Promise((resolve) => closed.close(resolve))
    servers.pop()
    const database = await open({ url: `postgres://x@127.0.0.1:${port}/x` })
    const { error, ms } = await rejection(database.db.execute(sql`select 1`))
    expect(codeOf(error)).toBe('ECONNREFUSED')
    expect(isDatabaseUnavailable(error)).toBe(true)
    expect(ms).toBeLessThan(1500)
  })

  it.runIf(postgresUrl)(
    'issue 11: statement_timeout (DATABASE_STATEMENT_TIMEOUT_MS) ends a slow statement with 57014, as unavailable',
    async () => {
      const database = await open({ url: postgresUrl, statementTimeoutMs: 300 })
      const { error, ms } = await rejection(database.db.execute(sql`select pg_sleep(5)`))
      expect(codeOf(error)).toBe('57014')
      expect(isDatabaseUnavailable(error)).toBe(true)
      expect(ms).toBeLessThan(3000)
      expect(await database.ping()).toBe(true)
    },
  )

  it.runIf(postgresUrl)(
    'issue 11: a query that waits for a busy pool longer than DATABASE_CONNECT_TIMEOUT_MS fails with POOL_TIMEOUT and never runs late',
    async () => {
      const database = await open({ url: postgresUrl, maxConnections: 1, connectTimeoutMs: 300 })
      await database.db.execute(sql`select 1`)
      // drizzle runs a query when it is awaited: start this one, and let it take the connection.
      const busy = Promise.resolve(database.db.execute(sql`select pg_sleep(1.2)`))
      await new Promise((resolve) => setTimeout(resolve, 100))
      // One query may wait on the busy connection itself (postgres.js pipelines one); it is sent
      // and runs when the connection frees up.
      const pipelined = Promise.resolve(database.db.execute(sql`select 1`))
      const table = `deadline_${crypto.randomUUID().replaceAll('-', '')}`
      const queued = rejection(database.db.execute(sql.raw(`create table ${table} (id int)`)))
      const { error, ms } = await queued
      expect(codeOf(error)).toBe('POOL_TIMEOUT')
      expect(isDatabaseUnavailable(error)).toBe(true)
      expect(ms).toBeLessThan(1000)
      await busy
      await pipelined
      // The abandoned statement was dropped from the queue, not run once the connection freed up.
      const found = await database.db.execute(sql`select to_regclass(${table}) as name`)
      expect(Array.from(found as unknown as { name: string | null }[])).toStrictEqual([{ name: null }])
    },
  )

  it.runIf(postgresUrl)(
    'issue 11: a connection that opens only after its first query gave up still joins the pool',
    async () => {
      // The server answers the start-up 500 ms late; the query gives up after 300 ms, while the
      // driver's own connect timeout (2 s here, longer after a reconnect backoff) still waits.
      const target = new URL(postgresUrl as string)
      const slow = createServer((inbound) => {
        inbound.pause()
        setTimeout(() => {
          const outbound = netConnect(Number(target.port || 5432), target.hostname)
          inbound.pipe(outbound).pipe(inbound)
          inbound.on('error', () => outbound.destroy())
          outbound.on('error', () => inbound.destroy())
        }, 500)
      })
      const port = await listening(slow)
      const url = new URL(target)
      url.port = String(port)
      const client = postgres(url.toString(), { max: 1, connect_timeout: 2, onnotice: () => {} })
      const db = drizzle(withQueryDeadlines(client, { acquireMs: 300, runMs: 2000 }))
      try {
        const first = await rejection(db.execute(sql`select 1`))
        expect(codeOf(first.error)).toBe('POOL_TIMEOUT')
        await new Promise((resolve) => setTimeout(resolve, 700))
        // The one pooled connection is open and free: the next queries need no new one.
        for (let attempt = 0; attempt < 3; attempt++) {
          expect(await db.execute(sql`select 1 as one`)).toHaveLength(1)
        }
      } finally {
        await client.end({ timeout: 1 })
      }
    },
  )

  it.runIf(postgresUrl)(
    'issue 11: a connection that goes silent mid-session fails queries and transactions within the deadline instead of hanging',
    async () => {
      const proxy = await silentableProxy(new URL(postgresUrl as string))
      const database = await open({
        url: proxy.url,
        maxConnections: 2,
        connectTimeoutMs: 300,
        statementTimeoutMs: 300,
      })
      await Promise.all([database.db.execute(sql`select 1`), database.db.execute(sql`select 1`)])
      proxy.goSilent()
      // Bound: 300 ms to wait or connect, then statement timeout + 1 s for a sent query.
      const query = await rejection(database.db.execute(sql`select 1`))
      expect(isDatabaseUnavailable(query.error)).toBe(true)
      expect(query.ms).toBeLessThan(3000)
      const transaction = await rejection(
        database.db.transaction(async (tx) => {
          await tx.execute(sql`select 1`)
        }),
      )
      expect(isDatabaseUnavailable(transaction.error)).toBe(true)
      expect(transaction.ms).toBeLessThan(3000)

      // Recovery without a restart: the pool reconnects on its own.
      proxy.restore()
      const restored = performance.now()
      let answered = false
      while (!answered && performance.now() - restored < 5000) {
        answered = await database.db.execute(sql`select 1`).then(
          () => true,
          () => false,
        )
      }
      expect(answered).toBe(true)
    },
  )
})

describe.each(testDatabases())('error classification on $name', ({ open: openTest }) => {
  it('issue 11: a constraint violation or a bad value is a fault of the request, not unavailability', async () => {
    const database = await openTest()
    opened.push(database)
    const tenant = `t-${crypto.randomUUID()}`
    await database.db.execute(sql`insert into tenants (id, name) values (${tenant}, 'x')`)
    const duplicate = await rejection(
      database.db.execute(sql`insert into tenants (id, name) values (${tenant}, 'x')`),
    )
    expect(codeOf(duplicate.error)).toBe('23505')
    expect(isDatabaseUnavailable(duplicate.error)).toBe(false)
    const badValue = await rejection(database.db.execute(sql`select ${'abc'}::int`))
    expect(isDatabaseUnavailable(badValue.error)).toBe(false)
    await database.db.execute(sql`delete from tenants where id = ${tenant}`)
  })

  it('issue 11: a refused connection to another service is not taken for the database', async () => {
    const error = await fetch('http://127.0.0.1:1/').catch((caught: unknown) => caught)
    expect(isDatabaseUnavailable(error)).toBe(false)
  })
})
