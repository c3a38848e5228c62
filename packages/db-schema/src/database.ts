import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import type * as schema from './schema'

/** Driver-neutral handle: repositories work the same on postgres.js and PGlite. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>

/** A database or an open transaction on it: repository methods accept either. */
export type Executor = Database | Parameters<Parameters<Database['transaction']>[0]>[0]

export type DatabaseKind = 'postgres' | 'pglite'
