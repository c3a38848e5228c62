import type { Sql } from 'postgres'
import type { QueryStats, PendingQuery as Tracked } from './query-stats'

export interface QueryDeadlines {
  /** How long a query may wait for a pooled connection, opening one included. */
  acquireMs: number
  /**
   * How long a query may run once sent. The server's `statement_timeout` normally ends it first;
   * this bound only fires when the server or the network stops answering at all.
   */
  runMs: number
}

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

// postgres.js sets `state` when it hands a query to a connection; until then the query is queued,
// and its text (`strings`) and values (`args`) are not yet built into a message.
type PendingQuery = PromiseLike<unknown> & { state?: unknown; strings?: unknown; args?: unknown }

/**
 * postgres.js queues a query while every pooled connection is busy or reconnecting, and waits for
 * a socket that stopped answering as long as TCP does: it has no acquire or client-side query
 * timeout. This wraps the client drizzle uses so that every query and transaction settles within
 * its deadlines, and a request never hangs on the database.
 */
export function withQueryDeadlines(client: Sql, deadlines: QueryDeadlines, stats?: QueryStats): Sql {
  return bind(client, { ...deadlines, stats }, false)
}

type Bounds = QueryDeadlines & { stats?: QueryStats | undefined }

function bind(client: Sql, deadlines: Bounds, inTransaction: boolean): Sql {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'unsafe') {
        return (...args: Parameters<Sql['unsafe']>) =>
          bounded(target.unsafe(...args), deadlines, inTransaction)
      }
      if (property === 'begin' && !inTransaction) return boundedBegin(target, deadlines)
      if (property === 'savepoint' && inTransaction) {
        // Nested drizzle transactions: the savepoint's statements are bounded too.
        return (...args: unknown[]) => {
          const callback = args.pop() as (sql: Sql) => unknown
          const savepoint = Reflect.get(target, property) as (...a: unknown[]) => Promise<unknown>
          return savepoint(...args, (sql: Sql) => callback(bind(sql, deadlines, true)))
        }
      }
      return Reflect.get(target, property, receiver)
    },
  })
}

/**
 * The query itself is returned (drizzle calls `.values()` on it); only its `then` changes, so
 * whoever awaits it is answered within `acquireMs + runMs` at the latest.
 */
function bounded<Q extends PendingQuery>(query: Q, deadlines: Bounds, inTransaction: boolean): Q {
  const then = query.then
  const { acquireMs, runMs, stats } = deadlines
  // A statement of a transaction runs on the transaction's connection.
  const tracked: Tracked = { holdsConnection: () => inTransaction || Boolean(query.state) }
  Object.defineProperty(query, 'then', {
    configurable: true,
    value(onFulfilled?: (value: unknown) => unknown, onRejected?: (reason: unknown) => unknown) {
      stats?.started(tracked)
      return new Promise((resolve, reject) => {
        let timer = setTimeout(() => {
          // A transaction owns its connection: its statements never wait in the pool's queue.
          if (query.state || inTransaction) {
            // Sent: a cancel request would need a new connection to a server that does not answer.
            timer = setTimeout(() => reject(new QueryDeadlineError('QUERY_TIMEOUT', runMs)), runMs)
            return
          }
          // Still queued: it must not run late, once the caller has been answered. postgres.js'
          // cancel() would drop it, but when the query is the first one of a connection being
          // opened, that connection then never joins the pool. As a no-op it runs harmlessly.
          Object.assign(query, { strings: ['select 1'], args: [] })
          reject(new QueryDeadlineError('POOL_TIMEOUT', acquireMs))
        }, acquireMs)
        then.call(
          query,
          (value) => {
            clearTimeout(timer)
            resolve(value)
          },
          (error) => {
            clearTimeout(timer)
            reject(error)
          },
        )
      })
        .then(
          (value) => {
            stats?.settled(tracked)
            return value
          },
          (error: unknown) => {
            stats?.settled(tracked, error)
            throw error
          },
        )
        .then(onFulfilled, onRejected)
    },
  })
  return query
}

/**
 * A transaction waits for its connection within `acquireMs`, its statements are bounded like any
 * query, and its COMMIT or ROLLBACK must come within `runMs` once the callback settles.
 */
function boundedBegin(target: Sql, deadlines: Bounds) {
  return (...args: unknown[]) => {
    const callback = args.pop() as (tx: Sql) => unknown
    // Waiting for its connection; once it has one, its statements are counted instead.
    const waiting: Tracked = { holdsConnection: () => false }
    deadlines.stats?.started(waiting)
    return new Promise((resolve, reject) => {
      let gaveUp = false
      let timer = setTimeout(() => {
        gaveUp = true
        const error = new QueryDeadlineError('POOL_TIMEOUT', deadlines.acquireMs)
        deadlines.stats?.settled(waiting, error)
        reject(error)
      }, deadlines.acquireMs)
      const run = async (tx: Sql) => {
        clearTimeout(timer)
        deadlines.stats?.settled(waiting)
        // The connection came after the caller was answered: roll back rather than run late.
        if (gaveUp) throw new QueryDeadlineError('POOL_TIMEOUT', deadlines.acquireMs)
        try {
          return await callback(bind(tx, deadlines, true))
        } finally {
          timer = setTimeout(() => {
            const error = new QueryDeadlineError('QUERY_TIMEOUT', deadlines.runMs)
            const commit: Tracked = { holdsConnection: () => true }
            deadlines.stats?.started(commit)
            deadlines.stats?.settled(commit, error)
            reject(error)
          }, deadlines.runMs)
        }
      }
      ;(target.begin as (...a: unknown[]) => Promise<unknown>)(...args, run)
        .then(resolve, reject)
        .finally(() => clearTimeout(timer))
    })
  }
}
