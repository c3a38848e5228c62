import { getTableColumns, sql } from 'drizzle-orm'
import type { PgTable } from 'drizzle-orm/pg-core'
import type { Database } from '../database'

/**
 * A raw statement parameter. Bare placeholders are encoded by the column they meet in some places
 * and not in others; raw ones never are, so callers pass driver values (ISO timestamps, JSON text).
 */
export const param = (name: string) => sql`${sql.placeholder(name)}`

const registry = new WeakMap<Database, Map<string, unknown>>()

/**
 * A statement built and prepared (as `name`) once per database handle, then executed with
 * placeholder values. The hot protocol paths run through these: building a query with drizzle
 * costs more CPU than PostgreSQL spends running it, and a named statement also spares the server
 * a parse per call.
 */
export function prepared<T>(
  db: Database,
  name: string,
  build: (db: Database) => { prepare(name: string): T },
): T {
  let statements = registry.get(db)
  if (!statements) {
    statements = new Map()
    registry.set(db, statements)
  }
  let statement = statements.get(name) as T | undefined
  if (statement === undefined) {
    statement = build(db).prepare(name)
    statements.set(name, statement)
  }
  return statement
}

/**
 * A prepared `insert … returning *` of exactly `columns`, run with `insertValues`. Placeholders are
 * raw parameters (drizzle would encode a null as JSON `null`); insertValues applies the encoding.
 */
export function preparedInsert<T extends PgTable>(db: Database, name: string, table: T, columns: string[]) {
  return prepared(db, name, (d) =>
    d
      .insert(table)
      .values(Object.fromEntries(columns.map((column) => [column, param(column)])) as never)
      .returning(),
  )
}

/** Each column's encoded value (arrays, JSON, timestamps as drizzle writes them), SQL null where absent. */
export function insertValues(table: PgTable, columns: string[], row: Record<string, unknown>) {
  const definitions = getTableColumns(table)
  return Object.fromEntries(
    columns.map((column) => {
      const value = row[column] ?? null
      const definition = definitions[column]
      return [column, value === null || !definition ? value : definition.mapToDriverValue(value)]
    }),
  )
}
