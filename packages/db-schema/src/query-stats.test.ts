import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { createDatabase } from './client'
import { testDatabases } from './testing'

describe.each(testDatabases())('database client stats on $name', ({ name, open }) => {
  it('metrics: a failed statement is counted by its SQLSTATE class; nothing stays busy after', async () => {
    const database = await open()
    try {
      const before = database.stats().errors.sqlstate_42 ?? 0
      await expect(database.db.execute(sql`select * from no_such_table`)).rejects.toThrow()
      // A failed statement inside a transaction counts once.
      await expect(
        database.db.transaction(async (tx) => {
          await tx.execute(sql`select 1`)
          await tx.execute(sql`select * from no_such_table`)
        }),
      ).rejects.toThrow()
      const stats = database.stats()
      expect(stats.errors.sqlstate_42).toBe(before + 2)
      expect({ busy: stats.busy, waiting: stats.waiting }).toStrictEqual({ busy: 0, waiting: 0 })
      expect(stats.maxConnections).toBe(name === 'pglite' ? 1 : 4)
    } finally {
      await database.close()
    }
  }, 60_000)

  it('bench: statements are counted, each once; on PGlite a transaction counts once', async () => {
    const database = await open()
    try {
      const before = database.stats().statements
      await database.db.execute(sql`select 1`)
      await database.db.execute(sql`select 2`)
      expect(database.stats().statements).toBe(before + 2)
      await database.db.transaction(async (tx) => {
        await tx.execute(sql`select 1`)
        await tx.execute(sql`select 2`)
      })
      // PostgreSQL: BEGIN, two statements, COMMIT on the reserved connection.
      expect(database.stats().statements).toBe(before + 2 + (name === 'pglite' ? 1 : 4))
    } finally {
      await database.close()
    }
  }, 60_000)

  // PGlite runs in this thread: pg_sleep blocks it, so nothing can look while a statement runs.
  it.skipIf(name === 'pglite')(
    'metrics: a statement under way is busy, and one beyond the pool waits',
    async () => {
      const database = await open()
      try {
        // Four connections: the fifth and sixth statements wait for one.
        const slow = Array.from({ length: 6 }, () =>
          database.db.execute(sql`select pg_sleep(1)`).then(() => {}),
        )
        await new Promise((resolve) => setTimeout(resolve, 600))
        const during = database.stats()
        await Promise.all(slow)
        expect({ busy: during.busy, waiting: during.waiting }).toStrictEqual({ busy: 4, waiting: 2 })
        expect(database.stats()).toMatchObject({ busy: 0, waiting: 0 })
      } finally {
        await database.close()
      }
    },
  )
})

describe.runIf(process.env.TEST_DATABASE_URL)('database client stats when PostgreSQL is gone', () => {
  it('metrics: a refused connection is counted as a connection failure or a pool timeout', async () => {
    const database = await createDatabase({
      url: 'postgres://postgres@127.0.0.1:1/none',
      connectTimeoutMs: 300,
    })
    try {
      await expect(database.db.execute(sql`select 1`)).rejects.toThrow()
      const errors = database.stats().errors
      expect((errors.connection ?? 0) + (errors.pool_timeout ?? 0)).toBe(1)
    } finally {
      await database.close()
    }
  })
})
