import { type SQL, sql } from 'drizzle-orm'
import type { AnyPgColumn } from 'drizzle-orm/pg-core'

/**
 * `column in ('a', 'b')` over fixed literals, for a CHECK: drizzle-kit writes the SQL text into the
 * migration, so the values are inlined rather than bound (they are constants of this package).
 */
export function oneOf(column: AnyPgColumn, values: readonly string[]): SQL {
  return sql`${column} in (${sql.raw(values.map((value) => `'${value}'`).join(', '))})`
}
