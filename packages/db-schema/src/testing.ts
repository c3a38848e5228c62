import { createDatabase, type DatabaseHandle } from './client'

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
  const open = (options: { url?: string }) => async () => {
    const database = await createDatabase({ ...options, maxConnections: 4 })
    await database.migrate()
    return database
  }
  return [
    { name: 'pglite', open: open({}) },
    ...(url ? [{ name: 'postgres' as const, open: open({ url }) }] : []),
  ]
}
