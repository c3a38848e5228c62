import { QueryDeadlineError } from './query-deadline-error'

// Socket errors of a database that is down, restarting or unreachable (Node.js errno codes).
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
])

// postgres.js connection errors, and the client-side deadlines of query-deadline.ts.
const CLIENT_CODES = new Set([
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'POOL_TIMEOUT',
  'QUERY_TIMEOUT',
])

// SQLSTATEs (PostgreSQL appendix A) that say "not now" rather than "not this request".
const SQLSTATES = new Set([
  '57014', // query_canceled: statement_timeout, or our cancel of a queued query
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or in recovery
  '53300', // too_many_connections
])

/** Why PostgreSQL refused or ended a connection, for the one log line of a 503. */
const REFUSALS: Record<string, string> = {
  '53300':
    'PostgreSQL refused a connection: too many clients (SQLSTATE 53300); processes × (DATABASE_POOL_SIZE + 1) must fit in max_connections (docs/operations.md)',
  '55000': 'PostgreSQL refused a connection: the database does not accept connections now (SQLSTATE 55000)',
  '57P01': 'PostgreSQL ended the connection: administrator command or shutdown (SQLSTATE 57P01)',
  '57P02': 'PostgreSQL ended the connection: the server crashed (SQLSTATE 57P02)',
  '57P03': 'PostgreSQL refused a connection: starting up, shutting down or in recovery (SQLSTATE 57P03)',
}

/**
 * Whether `error` means the database cannot answer now, as opposed to a fault of the query or the
 * data. The driver's error may sit in a `cause` chain (drizzle wraps it). Only errors that came
 * through a query count: both drivers tag those with `query`, so a refused connection to some
 * other service is not mistaken for the database.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  let fromQuery = false
  let unavailable = false
  let current = error as Chain | undefined
  for (let depth = 0; current && typeof current === 'object' && depth < 8; depth++) {
    const { cause, errors } = current
    // A PostgresError is the server's own answer, also when it refuses the connection before any
    // query (a transaction's first connect while the server shuts down carries no `query`).
    fromQuery ||=
      'query' in current || current instanceof QueryDeadlineError || current.name === 'PostgresError'
    // A connect to a host with several addresses fails with an AggregateError of each attempt.
    unavailable ||= [current, ...(Array.isArray(errors) ? errors : [])].some(unavailableCode)
    current = cause as Chain | undefined
  }
  return fromQuery && unavailable
}

/**
 * The reason of a connection PostgreSQL refused or ended (too many clients, a closed database, a
 * shutdown), or undefined for any other error; `error` as for {@link isDatabaseUnavailable}.
 */
export function databaseRefusal(error: unknown): string | undefined {
  let current = error as Chain | undefined
  for (let depth = 0; current && typeof current === 'object' && depth < 8; depth++) {
    const code = current.code
    if (typeof code === 'string' && REFUSALS[code] && unavailableCode(current)) return REFUSALS[code]
    current = current.cause as Chain | undefined
  }
  return undefined
}

type Chain = { code?: unknown; cause?: unknown; errors?: unknown; severity?: unknown; name?: unknown }

function unavailableCode(error: unknown): boolean {
  const { code, severity } = (error ?? {}) as Chain
  if (typeof code !== 'string') return false
  if (SOCKET_CODES.has(code) || CLIENT_CODES.has(code) || SQLSTATES.has(code)) return true
  // object_not_in_prerequisite_state is also an ordinary statement error; only as a FATAL refusal
  // of a new connection (a database with ALLOW_CONNECTIONS false) does it mean "not now".
  if (code === '55000') return severity === 'FATAL'
  // Class 08: connection exception.
  return code.length === 5 && code.startsWith('08')
}
