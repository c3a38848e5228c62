import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import {
  addRateLimitHits,
  hitRateLimit,
  purgeExpiredRateLimits,
  readRateLimit,
} from './repositories/rate-limits'
import { queryRows, testDatabases } from './testing'

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(testDatabases())('rate limit counters on $name', ({ open }) => {
  it('S-126: hits count up within a window, a read counts nothing, an ended window starts again at 1', async () => {
    const database = await open()
    const key = `test:${crypto.randomUUID()}`
    try {
      expect(await readRateLimit(database.db, key)).toStrictEqual({ count: 0, ttlMs: 0 })
      const first = await hitRateLimit(database.db, key, 1000)
      expect(first.count).toBe(1)
      expect(first.ttlMs).toBeGreaterThan(0)
      expect(first.ttlMs).toBeLessThanOrEqual(1000)
      expect((await hitRateLimit(database.db, key, 1000)).count).toBe(2)
      expect((await readRateLimit(database.db, key)).count).toBe(2)
      expect((await readRateLimit(database.db, key)).count).toBe(2)

      await pause(1050)
      expect(await readRateLimit(database.db, key)).toStrictEqual({ count: 0, ttlMs: 0 })
      expect((await hitRateLimit(database.db, key, 1000)).count).toBe(1)
    } finally {
      await database.close()
    }
  })

  it('S-126: hits counted later, many keys in one statement, add to what is there and open new windows', async () => {
    const database = await open()
    const [a, b] = [`test:${crypto.randomUUID()}`, `test:${crypto.randomUUID()}`]
    try {
      expect((await hitRateLimit(database.db, a, 60_000, 2)).count).toBe(2)
      await addRateLimitHits(database.db, [
        { key: a, amount: 3, windowMs: 60_000 },
        { key: b, amount: 1, windowMs: 60_000 },
      ])
      expect((await readRateLimit(database.db, a)).count).toBe(5)
      const opened = await readRateLimit(database.db, b)
      expect(opened.count).toBe(1)
      expect(opened.ttlMs).toBeGreaterThan(59_000)
      await addRateLimitHits(database.db, [])
      expect((await hitRateLimit(database.db, b, 60_000)).count).toBe(2)
    } finally {
      await database.close()
    }
  })

  it('S-126: concurrent hits on one key are each counted once (atomic upsert)', async () => {
    const database = await open()
    const key = `test:${crypto.randomUUID()}`
    try {
      const counts = await Promise.all(
        Array.from({ length: 20 }, () => hitRateLimit(database.db, key, 60_000)),
      )
      expect(counts.map((c) => c.count).sort((a, b) => a - b)).toStrictEqual(
        Array.from({ length: 20 }, (_, i) => i + 1),
      )
    } finally {
      await database.close()
    }
  })

  it('S-126: purges counters whose window has ended and keeps open ones', async () => {
    const database = await open()
    const ended = `test:${crypto.randomUUID()}`
    const open_ = `test:${crypto.randomUUID()}`
    try {
      await hitRateLimit(database.db, ended, 1)
      await hitRateLimit(database.db, open_, 60_000)
      await pause(20)
      // Other suites share a PostgreSQL database: purge until nothing ended is left.
      while ((await purgeExpiredRateLimits(database.db, 100)) === 100) {}
      const left = await queryRows<{ key: string }>(
        database.db,
        sql`select key from rate_limits where key in (${ended}, ${open_})`,
      )
      expect(left).toStrictEqual([{ key: open_ }])
    } finally {
      await database.close()
    }
  })
})
