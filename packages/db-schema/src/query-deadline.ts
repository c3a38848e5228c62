import type { ReservedSql, Sql } from 'postgres'
import { QueryDeadlineError } from './query-deadline-error'
import type { QueryStats, PendingQuery as Tracked } from './query-stats'
import { statementSpan } from './statement-span'

export interface QueryDeadlines {
  /** How long a query may wait for a pooled connection, opening one included. */
  acquireMs: number
  /**
   * How long a query may run once sent. The server's `statement_timeout` normally ends it first;
   * this bound only fires when the server or the network stops answering at all.
   */
  runMs: number
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
  return bind(client, { ...deadlines, stats }, undefined)
}

type Bounds = QueryDeadlines & { stats?: QueryStats | undefined }

/** A transaction's own savepoint counter; absent outside a transaction. */
type Transaction = { savepoints: number }

function bind(client: Sql, deadlines: Bounds, transaction: Transaction | undefined): Sql {
  const proxy: Sql = new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'unsafe') {
        return (...args: Parameters<Sql['unsafe']>) =>
          bounded(target.unsafe(...args), deadlines, transaction !== undefined, args[0])
      }
      if (property === 'begin' && !transaction) return reservedBegin(target, deadlines)
      // Nested drizzle transactions (`tx.transaction`): a reserved connection has no savepoint().
      if (property === 'savepoint' && transaction) {
        return (callback: (sql: Sql) => unknown) => savepoint(proxy, transaction, callback)
      }
      return Reflect.get(target, property, receiver)
    },
  })
  return proxy
}

/**
 * The query itself is returned (drizzle calls `.values()` on it); only its `then` changes, so
 * whoever awaits it is answered within `acquireMs + runMs` at the latest.
 */
function bounded<Q extends PendingQuery>(
  query: Q,
  deadlines: Bounds,
  inTransaction: boolean,
  text: string,
): Q {
  const then = query.then
  const { acquireMs, runMs, stats } = deadlines
  // A statement of a transaction runs on the transaction's connection.
  const tracked: Tracked = { holdsConnection: () => inTransaction || Boolean(query.state) }
  // One span from the first await to the answer (postgres.js awaits a transaction's statements again).
  let span: ReturnType<typeof statementSpan>
  Object.defineProperty(query, 'then', {
    configurable: true,
    value(onFulfilled?: (value: unknown) => unknown, onRejected?: (reason: unknown) => unknown) {
      stats?.started(tracked)
      span ??= statementSpan(text, false)
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
            span?.end()
            return value
          },
          (error: unknown) => {
            stats?.settled(tracked, error)
            span?.end(error)
            throw error
          },
        )
        .then(onFulfilled, onRejected)
    },
  })
  return query
}

/**
 * A transaction on a connection reserved for it. postgres.js' own `begin` may send BEGIN behind
 * another query on a busy connection without reserving it (porsager/postgres#1189, at the edge of
 * `max_pipeline`, which client.ts sets to 1): the transaction fails with UNSAFE_TRANSACTION and
 * stays open on the server while the connection serves other callers. `reserve()` hands out
 * only an idle connection. It must come within `acquireMs`; each statement, COMMIT and ROLLBACK
 * included, is bounded like any query.
 */
function reservedBegin(target: Sql, deadlines: Bounds) {
  return async (...args: unknown[]) => {
    const callback = args.pop() as (tx: Sql) => unknown
    const mode = typeof args[0] === 'string' ? args[0].replace(/[^a-z ]/gi, '') : ''
    const connection = await reserve(target, deadlines)
    const tx = bind(connection, deadlines, { savepoints: 0 })
    // No answer in time or a closed socket leaves the connection's state unknown: it is handed
    // out again only after a ROLLBACK behind the late statement succeeds (so no transaction stays
    // open holding locks); with a closed socket postgres.js takes it back when the socket closes.
    let inDoubt = false
    const run = async (statement: string) => {
      try {
        await tx.unsafe(statement)
      } catch (error) {
        inDoubt ||= connectionInDoubt(error)
        throw error
      }
    }
    try {
      await run(`begin ${mode}`)
      let result: unknown
      try {
        result = await callback(tx)
      } catch (error) {
        inDoubt ||= connectionInDoubt(error)
        if (!inDoubt) await run('rollback')
        throw error
      }
      // A failed COMMIT that the server answered (a serialization failure) ended the transaction.
      await run('commit')
      return result
    } finally {
      if (!inDoubt) connection.release()
      else
        connection.unsafe('rollback').then(
          () => connection.release(),
          () => {},
        )
    }
  }
}

async function reserve(target: Sql, deadlines: Bounds): Promise<ReservedSql> {
  // Waiting for its connection; once it has one, its statements are counted instead.
  const waiting: Tracked = { holdsConnection: () => false }
  deadlines.stats?.started(waiting, false)
  const reserving = target.reserve()
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new QueryDeadlineError('POOL_TIMEOUT', deadlines.acquireMs)),
      deadlines.acquireMs,
    )
  })
  try {
    const connection = await Promise.race([reserving, late])
    deadlines.stats?.settled(waiting)
    return connection
  } catch (error) {
    deadlines.stats?.settled(waiting, error)
    // The connection came after the caller was answered: straight back to the pool.
    reserving.then(
      (connection) => connection.release(),
      () => {},
    )
    throw error
  } finally {
    clearTimeout(timer)
  }
}

async function savepoint(tx: Sql, transaction: Transaction, callback: (sql: Sql) => unknown) {
  const name = `s${transaction.savepoints++}`
  await tx.unsafe(`savepoint ${name}`)
  try {
    const result = await callback(tx)
    await tx.unsafe(`release savepoint ${name}`)
    return result
  } catch (error) {
    if (!connectionInDoubt(error)) await tx.unsafe(`rollback to savepoint ${name}`)
    throw error
  }
}

/**
 * Whether `error` leaves the connection's state unknown: no answer in time, or a closed socket.
 * A server error (PostgresError) or the caller's own error leaves it usable.
 */
function connectionInDoubt(error: unknown): boolean {
  let current = error as { code?: unknown; cause?: unknown; name?: unknown } | undefined
  for (let depth = 0; current && typeof current === 'object' && depth < 8; depth++) {
    if (current instanceof QueryDeadlineError) return true
    if (current.name === 'PostgresError') return false
    if (typeof current.code === 'string' && /^(CONNECT|E[A-Z]+$)/.test(current.code)) return true
    current = current.cause as typeof current
  }
  return false
}
