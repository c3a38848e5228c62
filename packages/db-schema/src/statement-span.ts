import { type OpenSpan, openSpan, tracingOn } from '@credential-service/core-domain/tracing'

// The statement's operation and the table it names first: what a span may say about a statement.
// Parameter values never appear in drizzle's text (they are bound as $n), but a span does not
// carry the text either: a literal written into a query by hand would reach the trace.
const OPERATION =
  /^\s*(select|insert|update|delete|with|transaction|begin|commit|rollback|savepoint|release|set|lock)\b/i
const TABLE = /\b(?:from|into|update)\s+"?([A-Za-z_][A-Za-z0-9_]*)"?/i

/**
 * A client span for one database statement, `select sessions` or `commit`, with
 * `db.system.name` postgresql (PGlite speaks PostgreSQL too), the operation and the table.
 * Undefined when tracing is off: the caller does nothing more.
 */
export function statementSpan(text: unknown, embedded: boolean): OpenSpan | undefined {
  if (!tracingOn()) return undefined
  const statement = typeof text === 'string' ? text : ''
  const operation = OPERATION.exec(statement)?.[1]?.toLowerCase() ?? 'query'
  const table = TABLE.exec(statement)?.[1]
  return openSpan(table ? `${operation} ${table}` : operation, {
    kind: 'client',
    requireParent: true,
    attributes: () => ({
      'db.system': 'postgresql',
      'db.system.name': 'postgresql',
      'db.operation.name': operation,
      ...(table ? { 'db.collection.name': table } : {}),
      ...(embedded ? { 'db.client': 'pglite' } : {}),
    }),
  })
}
