import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { sql } from 'drizzle-orm'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator'
import postgres from 'postgres'
import type { Database, DatabaseKind } from './database'
import * as schema from './schema'

export interface DatabaseOptions {
  /** PostgreSQL connection string. When absent, an embedded PGlite database is used. */
  url?: string | undefined
  /** PGlite data folder; `memory://` keeps it in memory (tests). */
  dataDir?: string | undefined
  /** Pool size for PostgreSQL. */
  maxConnections?: number | undefined
}

export interface DatabaseHandle {
  db: Database
  kind: DatabaseKind
  /** Applies the committed SQL migrations; safe when several processes start at once. */
  migrate(): Promise<void>
  ping(): Promise<boolean>
  /** Calls `onPayload` for every NOTIFY on `channel`, from any process; returns the unlisten function. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>
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
  return options.url
    ? createPostgres(options.url, options.maxConnections ?? 10)
    : createPglite(options.dataDir)
}

function createPostgres(url: string, max: number): DatabaseHandle {
  const client = postgres(url, { max, onnotice: () => {} })
  const db = drizzlePostgres(client, { schema, casing: 'snake_case' }) as unknown as Database
  return {
    db,
    kind: 'postgres',
    async migrate() {
      // One dedicated connection holds the session-level advisory lock for the whole run.
      const single = postgres(url, { max: 1, onnotice: () => {} })
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
  const db = drizzlePglite(client, { schema, casing: 'snake_case' }) as unknown as Database
  return {
    db,
    kind: 'pglite',
    // PGlite is one in-process connection, so there is no one to race with.
    migrate: () => migratePglite(drizzlePglite(client), { migrationsFolder: migrationsFolder() }),
    ping: () => ping(db),
    async listen(channel, onPayload) {
      return client.listen(channel, onPayload)
    },
    close: () => client.close(),
  }
}

async function ping(db: Database): Promise<boolean> {
  try {
    await db.execute(sql`select 1`)
    return true
  } catch {
    return false
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
