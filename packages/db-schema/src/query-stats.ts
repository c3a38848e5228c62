import { QueryDeadlineError } from './query-deadline-error'

/** What the metrics endpoint reports about the database client of a process. */
export interface DatabaseStats {
  /** Connections the pool may open (1 for PGlite, a single in-process connection). */
  maxConnections: number
  /** Queries and transactions holding a connection now. */
  busy: number
  /** Queries and transactions waiting for a connection now. */
  waiting: number
  /** Failed queries since the process started, by {@link failureReason}. */
  errors: Readonly<Record<string, number>>
  /** Statements sent since the process started (PGlite: a transaction counts once). */
  statements: number
}

/**
 * Why a query failed, as a bounded label: `pool_timeout` / `query_timeout` (given up by the
 * client), `sqlstate_XX` (the server refused it; XX is the SQLSTATE class, e.g. 23 for a
 * constraint, 57 for a cancelled statement), or `connection` (no answer at all).
 */
export function failureReason(error: unknown): string {
  if (error instanceof QueryDeadlineError) return error.code.toLowerCase()
  const code = (error as { code?: unknown } | null)?.code
  const cause = (error as { cause?: unknown } | null)?.cause
  // drizzle wraps the driver's error (a PGlite transaction rejects with what its callback threw).
  if (code === undefined && cause !== undefined) return failureReason(cause)
  const name = (error as { name?: unknown } | null)?.name
  // postgres.js' PostgresError and PGlite's DatabaseError carry the server's SQLSTATE.
  if ((name === 'PostgresError' || name === 'DatabaseError' || name === 'error') && typeof code === 'string')
    return /^[0-9A-Z]{5}$/.test(code) ? `sqlstate_${code.slice(0, 2)}` : 'connection'
  return 'connection'
}

/** A query or transaction under way; `holdsConnection` is asked only when the stats are read. */
export interface PendingQuery {
  holdsConnection(): boolean
}

export interface QueryStats {
  /**
   * Counts `pending` as under way until {@link QueryStats.settled}, and as a statement unless it
   * only waits for a connection.
   */
  started(pending: PendingQuery, statement?: boolean): void
  /** Ends `pending`; a failure is counted by its reason (only while it is under way). */
  settled(pending: PendingQuery, error?: unknown): void
  snapshot(): DatabaseStats
}

/**
 * Kept by the client wrapper: one set entry per query under way, looked at only when the metrics
 * endpoint is scraped (postgres.js reports neither its pool nor when a query gets a connection).
 * `serial`: one connection runs everything in turn (PGlite), so one query is busy and the rest wait.
 */
export function createQueryStats(maxConnections: number, serial = false): QueryStats {
  const pending = new Set<PendingQuery>()
  const errors: Record<string, number> = {}
  const counted = new WeakSet<PendingQuery>()
  let statements = 0
  return {
    started(query, statement = true) {
      pending.add(query)
      // A query awaited twice (postgres.js awaits a transaction's statements again) counts once.
      if (statement && !counted.has(query)) {
        counted.add(query)
        statements++
      }
    },
    settled(query, error) {
      // A query awaited twice (postgres.js awaits a transaction's statements again) counts once.
      if (!pending.delete(query) || error === undefined) return
      const reason = failureReason(error)
      errors[reason] = (errors[reason] ?? 0) + 1
    },
    snapshot() {
      let busy = 0
      if (serial) busy = Math.min(pending.size, 1)
      else for (const query of pending) if (query.holdsConnection()) busy++
      return { maxConnections, busy, waiting: pending.size - busy, errors: { ...errors }, statements }
    },
  }
}
