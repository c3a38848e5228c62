import {
  addRateLimitHits,
  type Database,
  hitRateLimit,
  type RateLimitCount,
  type RateLimitHits,
  readRateLimit,
} from '@credential-service/db-schema'

/** How long a first hit waits to be counted in the database, with every other one of the process. */
export const FIRST_HIT_FLUSH_MS = 100

/** Keys a process answers first hits for at most; past it, every hit is counted at once. */
export const FIRST_HIT_KEYS = 20_000

export interface SharedCounterOptions {
  flushMs?: number
  maxKeys?: number
  onFlushError?: (error: unknown) => void
}

/**
 * Counters in the `rate_limits` table, shared by every process, at one statement per request
 * only where it decides something. Most keys (an address at an endpoint) are hit once a minute:
 * their first hit in a window cannot be over any limit, so the process answers it at once and
 * counts it, with all other first hits, in one statement within `flushMs`. A later hit of the key
 * is counted in the database before it is answered, together with what is still pending. So the
 * database knows every hit within `flushMs`, and a limit is exceeded by at most one request per
 * process and window (a first hit another process has not yet counted).
 */
export function createSharedCounter(db: Database, options: SharedCounterOptions = {}) {
  const flushMs = options.flushMs ?? FIRST_HIT_FLUSH_MS
  const maxKeys = options.maxKeys ?? FIRST_HIT_KEYS
  /** Keys this process has answered in their current window, and when that window ends here. */
  const seen = new Map<string, number>()
  const pending = new Map<string, RateLimitHits>()
  let timer: NodeJS.Timeout | undefined
  let flushing: Promise<void> = Promise.resolve()
  /**
   * Keys whose answered first hit is on its way to the database (in a flush, or with the key's
   * second hit). Later hits wait for it: sent side by side, they could be counted before it and
   * each see a count one too low.
   */
  const carrying = new Map<string, Promise<unknown>>()

  function carry(key: string, counted: Promise<unknown>) {
    carrying.set(key, counted)
    const done = () => {
      if (carrying.get(key) === counted) carrying.delete(key)
    }
    counted.then(done, done)
  }

  function prune(now: number) {
    for (const [key, endsAt] of seen) if (endsAt <= now) seen.delete(key)
  }

  function flush(): Promise<void> {
    timer = undefined
    if (pending.size === 0) return flushing
    const hits = [...pending.values()]
    pending.clear()
    if (seen.size > maxKeys / 2) prune(Date.now())
    flushing = addRateLimitHits(db, hits).catch((error: unknown) => options.onFlushError?.(error))
    for (const hit of hits) carry(hit.key, flushing)
    return flushing
  }

  function takePending(key: string): number {
    const hits = pending.get(key)
    pending.delete(key)
    return hits?.amount ?? 0
  }

  return {
    /** Counts one hit on `key`; the count so far as this process knows it. */
    hit(key: string, windowMs: number): Promise<RateLimitCount> | RateLimitCount {
      const now = Date.now()
      const endsAt = seen.get(key)
      if ((endsAt === undefined || endsAt <= now) && seen.size < maxKeys) {
        seen.set(key, now + windowMs)
        pending.set(key, { key, amount: 1, windowMs })
        timer ??= setTimeout(flush, flushMs).unref()
        return { count: 1, ttlMs: windowMs }
      }
      const ahead = carrying.get(key)
      if (ahead) {
        const counted = () => hitRateLimit(db, key, windowMs, 1)
        return ahead.then(counted, counted)
      }
      const waiting = takePending(key)
      const counted = hitRateLimit(db, key, windowMs, 1 + waiting)
      if (waiting > 0) carry(key, counted)
      return counted
    },

    /** The count of `key` without counting: the database's, and what this process has pending. */
    async read(key: string): Promise<RateLimitCount> {
      for (;;) {
        await carrying.get(key)?.catch(() => {})
        const waiting = pending.get(key)
        const counted = await readRateLimit(db, key)
        // A flush that took the key while the database was read may or may not be in `counted`:
        // wait for it and read again rather than count its hit twice or not at all.
        if (pending.get(key) !== waiting) continue
        return {
          count: counted.count + (waiting?.amount ?? 0),
          ttlMs: counted.ttlMs || (waiting?.windowMs ?? 0),
        }
      }
    },

    /** Counts what is pending now (at shutdown, so no hit is lost). */
    async close(): Promise<void> {
      clearTimeout(timer)
      await flush()
    },
  }
}
export type SharedCounter = ReturnType<typeof createSharedCounter>
