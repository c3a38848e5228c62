// Its own module: query-deadline.ts raises it and query-stats.ts counts it, while query-deadline.ts
// reports to query-stats.ts; a shared home keeps the two from importing each other.

/** A query given up on by the client: no connection in time, or no answer from a silent server. */
export class QueryDeadlineError extends Error {
  readonly code: 'POOL_TIMEOUT' | 'QUERY_TIMEOUT'

  constructor(code: 'POOL_TIMEOUT' | 'QUERY_TIMEOUT', ms: number) {
    super(
      code === 'POOL_TIMEOUT'
        ? `no database connection within ${ms} ms`
        : `no answer from the database within ${ms} ms`,
    )
    this.name = 'QueryDeadlineError'
    this.code = code
  }
}
