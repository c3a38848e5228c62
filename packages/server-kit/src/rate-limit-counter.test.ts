import { readRateLimit } from '@credential-service/db-schema'
import { testDatabases } from '@credential-service/db-schema/testing'
import { describe, expect, it } from 'vitest'
import { createSharedCounter, FIRST_HIT_FLUSH_MS } from './rate-limit-counter'

const WINDOW = 60_000
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const flushed = () => pause(FIRST_HIT_FLUSH_MS + 150)
const key = () => `test:${crypto.randomUUID()}`

describe.each(testDatabases())('rate limit counters shared through $name (issue 20)', ({ open }) => {
  it('S-126: first hits are answered at once and counted together in one statement within the flush interval', async () => {
    const database = await open()
    const counter = createSharedCounter(database.db)
    try {
      const keys = Array.from({ length: 10 }, key)
      const before = database.stats().statements
      for (const k of keys) expect(counter.hit(k, WINDOW)).toStrictEqual({ count: 1, ttlMs: WINDOW })
      expect(database.stats().statements).toBe(before)
      await flushed()
      expect(database.stats().statements).toBe(before + 1)
      for (const k of keys) expect((await readRateLimit(database.db, k)).count).toBe(1)
    } finally {
      await counter.close()
      await database.close()
    }
  })

  it('S-126: a later hit is counted in the database before it is answered, with what was pending, once', async () => {
    const database = await open()
    const counter = createSharedCounter(database.db)
    try {
      const k = key()
      counter.hit(k, WINDOW)
      expect((await counter.read(k)).count).toBe(1)
      expect((await counter.hit(k, WINDOW)).count).toBe(2)
      expect((await readRateLimit(database.db, k)).count).toBe(2)
      expect((await counter.hit(k, WINDOW)).count).toBe(3)
      await flushed()
      expect((await readRateLimit(database.db, k)).count).toBe(3)
    } finally {
      await counter.close()
      await database.close()
    }
  })

  it('S-126: a read while the first hit is being flushed counts it once (not 0, not 2)', async () => {
    const database = await open()
    // A flush interval of 1 ms lands the flush in the middle of the read's statement.
    const counter = createSharedCounter(database.db, { flushMs: 1 })
    try {
      const counts: number[] = []
      for (let n = 0; n < 40; n++) {
        const k = key()
        counter.hit(k, WINDOW)
        counts.push((await counter.read(k)).count)
      }
      expect(counts).toStrictEqual(counts.map(() => 1))
    } finally {
      await counter.close()
      await database.close()
    }
  })

  it('S-126: two processes exceed a limit by at most one first hit each, and count exactly once it is saved', async () => {
    const database = await open()
    // Two counters on one database, as two processes have (PGlite: one handle stands for both).
    const processes = [createSharedCounter(database.db), createSharedCounter(database.db)]
    const max = 3
    try {
      const k = key()
      let answered = 0
      for (let n = 0; n < 8; n++) {
        const { count } = await (processes[n % 2] as (typeof processes)[0]).hit(k, WINDOW)
        if (count <= max) answered++
      }
      expect(answered).toBeLessThanOrEqual(max + 1)
      expect(answered).toBeGreaterThanOrEqual(max)
      await flushed()
      // Every hit is in the database now: eight, whichever process took it.
      expect((await readRateLimit(database.db, k)).count).toBe(8)
      for (const process of processes) expect((await process.hit(k, WINDOW)).count).toBeGreaterThan(max)
    } finally {
      await Promise.all(processes.map((process) => process.close()))
      await database.close()
    }
  })

  it('S-126: in a burst on one process, the first hit is counted before any later one (never N + 1 answered)', async () => {
    const database = await open()
    const counter = createSharedCounter(database.db)
    const max = 3
    try {
      for (let round = 0; round < 10; round++) {
        const k = key()
        // The first hit is answered at once; 29 more race to the database on several connections.
        const counts = [
          await counter.hit(k, WINDOW),
          ...(await Promise.all(Array.from({ length: 29 }, () => counter.hit(k, WINDOW)))),
        ]
        expect(counts.filter(({ count }) => count <= max)).toHaveLength(max)
      }
    } finally {
      await counter.close()
      await database.close()
    }
  })

  it('close counts what is pending; past maxKeys every hit is counted at once', async () => {
    const database = await open()
    const counter = createSharedCounter(database.db, { flushMs: 60_000, maxKeys: 2 })
    try {
      const [a, b, c] = [key(), key(), key()]
      counter.hit(a, WINDOW)
      counter.hit(b, WINDOW)
      // The third key finds the first-hit table full: counted in the database before the answer.
      expect((await counter.hit(c, WINDOW)).count).toBe(1)
      expect((await readRateLimit(database.db, c)).count).toBe(1)
      expect((await readRateLimit(database.db, a)).count).toBe(0)
      await counter.close()
      expect((await readRateLimit(database.db, a)).count).toBe(1)
      expect((await readRateLimit(database.db, b)).count).toBe(1)
    } finally {
      await database.close()
    }
  })
})
