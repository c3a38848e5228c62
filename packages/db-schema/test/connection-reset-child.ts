// Run by src/connection-reset.test.ts in a process of its own: an uncaught exception of the
// driver ends this process, which is what the test looks for.
import { sql } from 'drizzle-orm'
import postgres from 'postgres'
import { createDatabase } from '../src/client'
import { isDatabaseUnavailable } from '../src/unavailable'

const [url = '', name = ''] = process.argv.slice(2)
const own = new URL(url)
own.searchParams.set('application_name', name)
const database = await createDatabase({ url: own.href, maxConnections: 2 })
const admin = postgres(url, { max: 1, onnotice: () => {} })

/** Whether each transaction failed as "database unavailable" (true) or otherwise. */
async function outcomes(transactions: Promise<unknown>[]): Promise<boolean[]> {
  const settled = await Promise.allSettled(transactions)
  return settled.map((result) => result.status === 'rejected' && isDatabaseUnavailable(result.reason))
}

// The transaction's own statement ends its backend: the FATAL answer and the closed socket come
// while the transaction is open, and its ROLLBACK goes to a connection without a socket.
const ownBackend: boolean[] = []
for (let round = 0; round < 4; round++) {
  const transaction = database.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_terminate_backend(pg_backend_pid())`)
  })
  ownBackend.push(...(await outcomes([transaction])))
}

// Another session ends every backend of this client while two transactions wait on the server.
const running = outcomes(
  [0, 1].map(() =>
    database.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_sleep(2)`)
      await tx.execute(sql`select 1`)
    }),
  ),
)
await new Promise((resolve) => setTimeout(resolve, 300))
await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${name}`
const otherSession = await running

// Writes the driver deferred (setImmediate) would run now.
await new Promise((resolve) => setTimeout(resolve, 50))
const started = performance.now()
const committed = await database.db.transaction(async (tx) => {
  await tx.execute(sql`select 1`)
  return true
})
console.log(
  JSON.stringify({
    ownBackend,
    otherSession,
    committedAfter: committed,
    recoveredMs: Math.round(performance.now() - started),
  }),
)
await admin.end()
await database.close()
