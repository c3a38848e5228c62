import { sql } from 'drizzle-orm'
import type { Database } from '../database'
import { rateLimits } from '../schema'
import { param, prepared } from './prepared'

/** A counter's state: hits in the current window and milliseconds until the window ends. */
export interface RateLimitCount {
  count: number
  ttlMs: number
}

// Times come from the database clock, the one clock every process shares.
const ttlMs = sql<number>`greatest(0, ceil(extract(epoch from (${rateLimits.resetAt} - now())) * 1000))::int`
const windowEnd = sql`now() + (${param('windowMs')}::int * interval '1 millisecond')`
const expired = sql`${rateLimits.resetAt} <= now()`

const statements = {
  // One atomic upsert: a new key or a key past its window starts a window at `amount`.
  hit: (db: Database) =>
    prepared(db, 'rate_limit_hit', (d) =>
      d
        .insert(rateLimits)
        .values({ key: param('key'), count: sql`${param('amount')}::int`, resetAt: windowEnd })
        .onConflictDoUpdate({
          target: rateLimits.key,
          set: {
            count: sql`case when ${expired} then excluded.count else ${rateLimits.count} + excluded.count end`,
            resetAt: sql`case when ${expired} then excluded.reset_at else ${rateLimits.resetAt} end`,
          },
        })
        .returning({ count: rateLimits.count, ttlMs }),
    ),
  read: (db: Database) =>
    prepared(db, 'rate_limit_read', (d) =>
      d
        .select({ count: rateLimits.count, ttlMs })
        .from(rateLimits)
        .where(sql`${rateLimits.key} = ${param('key')} and not ${expired}`),
    ),
}

/** Counts `amount` hits on `key` in a window of `windowMs` and returns the count so far. */
export async function hitRateLimit(
  db: Database,
  key: string,
  windowMs: number,
  amount = 1,
): Promise<RateLimitCount> {
  const [row] = await statements.hit(db).execute({ key, windowMs, amount })
  if (!row) throw new Error('the rate limit upsert returned no row')
  return row
}

export interface RateLimitHits {
  key: string
  amount: number
  windowMs: number
}

/**
 * Counts hits on many keys in one statement (each key at most once), as `hitRateLimit` counts
 * them on one: the counters a process has answered from before the database saw them.
 */
export async function addRateLimitHits(db: Database, hits: readonly RateLimitHits[]): Promise<void> {
  if (hits.length === 0) return
  const keys = hits.map((hit) => hit.key)
  const amounts = hits.map((hit) => hit.amount)
  const windows = hits.map((hit) => hit.windowMs)
  await db.execute(sql`
    insert into ${rateLimits} (key, count, reset_at)
    select key, amount, now() + (window_ms * interval '1 millisecond')
    from unnest(${sql.param(keys)}::text[], ${sql.param(amounts)}::int[], ${sql.param(windows)}::int[]) as hit(key, amount, window_ms)
    on conflict (key) do update set
      count = case when ${rateLimits.resetAt} <= now() then excluded.count else ${rateLimits.count} + excluded.count end,
      reset_at = case when ${rateLimits.resetAt} <= now() then excluded.reset_at else ${rateLimits.resetAt} end`)
}

/** The count of `key` in its current window, without counting; zero when none is open. */
export async function readRateLimit(db: Database, key: string): Promise<RateLimitCount> {
  const [row] = await statements.read(db).execute({ key })
  return row ?? { count: 0, ttlMs: 0 }
}

/** Deletes up to `limit` counters whose window has ended; returns how many. */
export async function purgeExpiredRateLimits(db: Database, limit = 1000): Promise<number> {
  const ended = db.select({ key: rateLimits.key }).from(rateLimits).where(expired).limit(limit)
  const rows = await db
    .delete(rateLimits)
    .where(sql`${rateLimits.key} in ${ended}`)
    .returning({ key: rateLimits.key })
  return rows.length
}
