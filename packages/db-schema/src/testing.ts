import type { SQL } from 'drizzle-orm'
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
 * TEST_DATABASE_URL is set. Suites use random tenant ids, so files share one PostgreSQL database.
 */
export function testDatabases(): TestDatabase[] {
  const url = process.env.TEST_DATABASE_URL
  return [{ name: 'pglite', open: open({}) }, ...(url ? [postgresTestDatabase(url)] : [])]
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
