import { randomBytes } from 'node:crypto'
import type { SQL } from 'drizzle-orm'
import postgres from 'postgres'
import { createDatabase, type DatabaseHandle } from './client'
import type { Database } from './database'

/** One MASTER_SECRET for every suite: a shared PostgreSQL test database remembers its fingerprint. */
export const TEST_MASTER_SECRET = 'test-master-secret-that-is-long-enough-0123456789'

export interface TestDatabase {
  name: 'pglite' | 'postgres'
  /** Opens the database and applies the real migrations. */
  open(): Promise<DatabaseHandle>
}

/**
 * The databases integration suites run on: embedded PGlite always, PostgreSQL too when
 * TEST_DATABASE_URL is set. Suites use random tenant ids, so files share one PostgreSQL database,
 * and the files of a worker one embedded database. `alone`: an embedded database of the caller's
 * own, empty and closed by `close()`, for a suite that takes the database away under an app.
 */
export function testDatabases(options: { alone?: boolean; ownPostgres?: boolean } = {}): TestDatabase[] {
  const url = process.env.TEST_DATABASE_URL
  return [
    { name: 'pglite', open: options.alone ? open({}) : openEmbedded },
    ...(url ? [options.ownPostgres ? ownPostgresTestDatabase(url) : postgresTestDatabase(url)] : []),
  ]
}

/**
 * `ownPostgres`: a new PostgreSQL database next to TEST_DATABASE_URL's, dropped by `close()`, for
 * a suite whose background jobs act on every tenant's rows (the trust list refresh): on the shared
 * database, suites running at once would take each other's rows.
 */
function ownPostgresTestDatabase(baseUrl: string): TestDatabase {
  return {
    name: 'postgres',
    async open() {
      const name = `cs_own_${randomBytes(6).toString('hex')}`
      const admin = postgres(baseUrl, { max: 1, onnotice: () => {} })
      try {
        await admin.unsafe(`create database ${name}`)
      } finally {
        await admin.end()
      }
      const url = new URL(baseUrl)
      url.pathname = `/${name}`
      const handle = await open({ url: url.href })()
      return {
        ...handle,
        async close() {
          await handle.close()
          const sql = postgres(baseUrl, { max: 1, onnotice: () => {} })
          try {
            await sql.unsafe(`drop database if exists ${name} with (force)`)
          } finally {
            await sql.end()
          }
        },
      }
    },
  }
}

let embedded: Promise<DatabaseHandle> | undefined

/**
 * The embedded database of this test worker: started and migrated once, then shared by the files
 * the worker runs (vitest's `isolate: false`), as files share the PostgreSQL database. Starting
 * PGlite costs ~1.5 s of CPU, and some hundred suites opened one. Closing a handle drops what it
 * listens to and leaves the database open for the next.
 */
async function openEmbedded(): Promise<DatabaseHandle> {
  embedded ??= open({})()
  const shared = await embedded
  const unlisteners = new Set<() => Promise<void>>()
  return {
    ...shared,
    async listen(channel, onPayload) {
      const unlisten = await shared.listen(channel, onPayload)
      const once = async () => {
        if (unlisteners.delete(once)) await unlisten()
      }
      unlisteners.add(once)
      return once
    },
    async close() {
      await Promise.all([...unlisteners].map((unlisten) => unlisten()))
    },
  }
}

/** A PostgreSQL database of the file's own (a suite that must not share its rows). */
export function postgresTestDatabase(url: string): TestDatabase {
  return { name: 'postgres', open: open({ url }) }
}

const open = (options: { url?: string }) => async () => {
  const database = await createDatabase({ ...options, maxConnections: 4 })
  await database.migrate()
  return database
}

/** Runs raw SQL and returns plain row objects, whichever driver answers. */
export async function queryRows<T extends Record<string, unknown>>(db: Database, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] } | T[]
  // PGlite answers { rows }, postgres.js an array subclass: copy into plain objects.
  return Array.from(Array.isArray(result) ? result : result.rows, (row) => ({ ...row }))
}
