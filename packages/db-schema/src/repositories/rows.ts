/** The rows of a raw `db.execute`: PGlite answers `{ rows }`, postgres.js an array. */
export function rowsOf(result: unknown): unknown[] {
  return Array.isArray(result) ? result : ((result as { rows?: unknown[] }).rows ?? [])
}
