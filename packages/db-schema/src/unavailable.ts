import { QueryDeadlineError } from './query-deadline'

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
    fromQuery ||= 'query' in current || current instanceof QueryDeadlineError
    // A connect to a host with several addresses fails with an AggregateError of each attempt.
    unavailable ||= [current, ...(Array.isArray(errors) ? errors : [])].some(unavailableCode)
    current = cause as Chain | undefined
  }
  return fromQuery && unavailable
}

type Chain = { code?: unknown; cause?: unknown; errors?: unknown }

function unavailableCode(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code
  if (typeof code !== 'string') return false
  if (SOCKET_CODES.has(code) || CLIENT_CODES.has(code) || SQLSTATES.has(code)) return true
  // Class 08: connection exception.
  return code.length === 5 && code.startsWith('08')
}
