import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { sql } from 'drizzle-orm'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator'
import postgres from 'postgres'
import type { Database, DatabaseKind } from './database'
import { withQueryDeadlines } from './query-deadline'
import { createQueryStats, type DatabaseStats, type QueryStats } from './query-stats'
import * as schema from './schema'
import { statementSpan } from './statement-span'

export interface DatabaseOptions {
  /** PostgreSQL connection string. When absent, an embedded PGlite database is used. */
  url?: string | undefined
  /** PGlite data folder; `memory://` keeps it in memory (tests). */
  dataDir?: string | undefined
  /** Pool size for PostgreSQL. */
  maxConnections?: number | undefined
  /** PostgreSQL: the server ends a statement that runs longer (`statement_timeout`); default 10 s. */
  statementTimeoutMs?: number | undefined
  /**
   * PostgreSQL: how long opening a connection, or waiting for a pooled one, may take before the
   * query fails as unavailable; default 3 s.
   */
  connectTimeoutMs?: number | undefined
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000
export const DEFAULT_CONNECT_TIMEOUT_MS = 3000

/** `ping()` answers false rather than wait longer than this: health checks answer within 1 s. */
export const PING_TIMEOUT_MS = 800

// Reconnect delay in seconds after the n-th failed attempt. postgres.js grows it to 20 s, so after
// an outage requests would wait that long for the database that is back; 1 s at most keeps
// recovery quick and costs a refused connection per pooled slot and second while it is down.
const reconnectBackoff = (attempt: number) => Math.min(0.05 * 2 ** attempt, 1)

// Margin past statement_timeout before the client gives up on a silent server itself.
const SERVER_TIMEOUT_MARGIN_MS = 1000

export interface DatabaseHandle {
  db: Database
  kind: DatabaseKind
  /** Applies the committed SQL migrations; safe when several processes start at once. */
  migrate(): Promise<void>
  /** Whether the database answers `select 1`; false after `PING_TIMEOUT_MS` at most. */
  ping(): Promise<boolean>
  /** Calls `onPayload` for every NOTIFY on `channel`, from any process; returns the unlisten function. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>
  /** Pool use and failed queries of this client, for the metrics endpoint. */
  stats(): DatabaseStats
  close(): Promise<void>
}

// Statements are in order; pods racing to migrate serialise on this advisory lock.
const MIGRATION_LOCK = 727_100_501

/** Finds the migrations folder next to the source (workspace) or next to a bundled entry point. */
export function migrationsFolder(): string {
  const candidates = [new URL('../migrations', import.meta.url), new URL('./migrations', import.meta.url)]
  for (const candidate of candidates) {
    const path = fileURLToPath(candidate)
    if (existsSync(`${path}/meta/_journal.json`)) return path
  }
  throw new Error('database migrations folder not found next to the application')
}

export async function createDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  return options.url ? createPostgres(options.url, options) : createPglite(options.dataDir)
}

// At most one query waits on a busy connection behind the running one; the rest wait in the
// pool's queue, where a query can be dropped at its deadline. A sent query cannot, and a deep
// pipeline would hold many behind one slow statement. Transactions take an idle connection of
// their own (query-deadline.ts): a BEGIN pipelined at this limit would not reserve its connection.
// (`max_pipeline` is read by postgres.js' option parser, src/index.js, but missing from its types.)
const pipeline = { max_pipeline: 1 }

function createPostgres(url: string, options: DatabaseOptions): DatabaseHandle {
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS
  const max = options.maxConnections ?? 10
  const stats = createQueryStats(max)
  const client = postgres(url, {
    max,
    onnotice: () => {},
    connect_timeout: connectTimeoutMs / 1000,
    connection: { statement_timeout: statementTimeoutMs },
    backoff: reconnectBackoff,
    ...pipeline,
  })
  const bounded = withQueryDeadlines(
    client,
    { acquireMs: connectTimeoutMs, runMs: statementTimeoutMs + SERVER_TIMEOUT_MARGIN_MS },
    stats,
  )
  const db = drizzlePostgres(bounded, { schema, casing: 'snake_case' }) as unknown as Database
  return {
    db,
    kind: 'postgres',
    async migrate() {
      // One dedicated connection holds the session-level advisory lock for the whole run. It has
      // no statement timeout: a migration may rewrite a large table, and waiting for the lock
      // held by another pod is expected.
      // It opens within DATABASE_CONNECT_TIMEOUT_MS like the pool's, so start-up retries an unreachable host on time.
      const single = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: connectTimeoutMs / 1000 })
      try {
        await single`select pg_advisory_lock(${MIGRATION_LOCK})`
        await migratePostgres(drizzlePostgres(single), { migrationsFolder: migrationsFolder() })
      } finally {
        await single`select pg_advisory_unlock(${MIGRATION_LOCK})`.catch(() => {})
        await single.end()
      }
    },
    ping: () => ping(db),
    // postgres.js listens on a dedicated connection and re-listens after a reconnect.
    async listen(channel, onPayload) {
      const { unlisten } = await client.listen(channel, onPayload)
      return unlisten
    },
    stats: stats.snapshot,
    close: () => client.end({ timeout: 5 }),
  }
}

async function createPglite(dataDir: string | undefined): Promise<DatabaseHandle> {
  // Loaded only in embedded mode: a process on PostgreSQL never holds PGlite in memory.
  const [{ PGlite }, { drizzle: drizzlePglite }, { migrate: migratePglite }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('drizzle-orm/pglite'),
    import('drizzle-orm/pglite/migrator'),
  ])
  const location = dataDir ?? 'memory://'
  if (!location.startsWith('memory://')) mkdirSync(location, { recursive: true })
  const client = await PGlite.create(location)
  const stats = createQueryStats(1, true)
  const db = drizzlePglite(withStats(client, stats), { schema, casing: 'snake_case' }) as unknown as Database
  return {
    db,
    kind: 'pglite',
    // PGlite is one in-process connection, so there is no one to race with.
    migrate: () => migratePglite(drizzlePglite(client), { migrationsFolder: migrationsFolder() }),
    ping: () => ping(db),
    async listen(channel, onPayload) {
      return client.listen(channel, onPayload)
    },
    stats: stats.snapshot,
    close: () => client.close(),
  }
}

/**
 * Counts PGlite's top-level calls (a transaction counts once, whatever it runs): drizzle sends
 * every statement through `query`, `exec` or `transaction`.
 */
function withStats<C extends object>(client: C, stats: QueryStats): C {
  const counted = new Set<PropertyKey>(['query', 'exec', 'transaction'])
  return new Proxy(client, {
    get(target, property) {
      // On the client itself, not the proxy: PGlite keeps its state in private fields.
      const value = Reflect.get(target, property)
      if (typeof value !== 'function') return value
      if (!counted.has(property)) return value.bind(target)
      return async (...args: unknown[]) => {
        const tracked = { holdsConnection: () => true }
        stats.started(tracked)
        // A transaction is one span: its statements run on PGlite's transaction object.
        const span = statementSpan(property === 'transaction' ? 'transaction' : args[0], true)
        try {
          const result = await Reflect.apply(value, target, args)
          stats.settled(tracked)
          span?.end()
          return result
        } catch (error) {
          stats.settled(tracked, error)
          span?.end(error)
          throw error
        }
      }
    },
  })
}

async function ping(db: Database): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS)
  })
  const answered = db.execute(sql`select 1`).then(
    () => true,
    () => false,
  )
  try {
    return await Promise.race([answered, late])
  } finally {
    clearTimeout(timer)
  }
}

/** Migration tags not yet applied to the database (an upgrade applies them at start). */
export async function pendingMigrations(db: Database): Promise<string[]> {
  const journal = JSON.parse(readFileSync(`${migrationsFolder()}/meta/_journal.json`, 'utf8')) as {
    entries: { tag: string }[]
  }
  let applied = 0
  try {
    const result = (await db.execute(
      sql`select count(*)::int as n from drizzle.__drizzle_migrations`,
    )) as unknown as { rows: { n: number }[] } | { n: number }[]
    applied = (Array.isArray(result) ? result[0]?.n : result.rows[0]?.n) ?? 0
  } catch {
    applied = 0
  }
  return journal.entries.slice(applied).map((entry) => entry.tag)
}
