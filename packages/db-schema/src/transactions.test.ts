import { sql } from 'drizzle-orm'
import { afterEach, describe, expect, it } from 'vitest'
import { createDatabase, type DatabaseHandle } from './client'

const postgresUrl = process.env.TEST_DATABASE_URL
const opened: DatabaseHandle[] = []

afterEach(async () => {
  await Promise.all(opened.splice(0).map((database) => database.close()))
})

async function open(maxConnections: number) {
  const database = await createDatabase({ url: postgresUrl, maxConnections })
  opened.push(database)
  return database
}

const rows = (result: unknown) => Array.from(result as Record<string, unknown>[], (row) => ({ ...row }))

describe.runIf(postgresUrl)('transactions on PostgreSQL', () => {
  it('issue 19: with every pooled connection busy, transactions never share one (no UNSAFE_TRANSACTION)', async () => {
    const database = await open(2)
    const { db } = database
    await Promise.all([db.execute(sql`select 1`), db.execute(sql`select 1`)])
    // Both open connections run a query: postgres.js would pipeline a BEGIN behind one of them.
    const busy = [db.execute(sql`select pg_sleep(0.2)`), db.execute(sql`select pg_sleep(0.2)`)].map((query) =>
      Promise.resolve(query),
    )
    await new Promise((resolve) => setTimeout(resolve, 50))
    const work = Array.from({ length: 20 }, (_, i) =>
      i % 2
        ? db.transaction(async (tx) => {
            const [row] = rows(await tx.execute(sql`select txid_current() as id`))
            await tx.execute(sql`select pg_sleep(0.005)`)
            const [again] = rows(await tx.execute(sql`select txid_current() as id`))
            // Both statements ran in this transaction, on its own connection.
            expect(again).toStrictEqual(row)
          })
        : Promise.resolve(db.execute(sql`select pg_sleep(0.005)`)),
    )
    await Promise.all(busy)
    const failed = (await Promise.allSettled(work)).filter((outcome) => outcome.status === 'rejected')
    expect(failed).toStrictEqual([])
    // No transaction was left open on a connection that went back to the pool.
    const [state] = rows(await db.execute(sql`select txid_current_if_assigned() as id`))
    expect(state).toStrictEqual({ id: null })
  })

  it('issue 19: a failed transaction rolls back and hands its connection back; a nested one rolls back to its savepoint', async () => {
    const database = await open(1)
    const { db } = database
    for (let i = 0; i < 3; i++) {
      await expect(
        db.transaction(async (tx) => {
          await tx.execute(sql`select 1`)
          throw new Error('the caller gives up')
        }),
      ).rejects.toThrow('the caller gives up')
    }
    const kept = await db.transaction(async (tx) => {
      await tx.execute(sql`create temporary table kept (id int) on commit drop`)
      await tx.execute(sql`insert into kept values (1)`)
      await expect(
        tx.transaction(async (inner) => {
          await inner.execute(sql`insert into kept values (2)`)
          throw new Error('inner fails')
        }),
      ).rejects.toThrow('inner fails')
      await tx.transaction(async (inner) => {
        await inner.execute(sql`insert into kept values (3)`)
      })
      return rows(await tx.execute(sql`select id from kept order by id`))
    })
    expect(kept).toStrictEqual([{ id: 1 }, { id: 3 }])
  })
})
