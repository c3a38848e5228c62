import { RateLimitedError } from '@credential-service/core-domain'
import { type Database, purgeExpiredRateLimits, type RateLimitCount } from '@credential-service/db-schema'
import fastifyRateLimit, {
  type FastifyRateLimitStore,
  type FastifyRateLimitStoreCtor,
  normalizeIP,
} from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import { createSharedCounter, type SharedCounter } from './rate-limit-counter'
import { scheduleJob } from './runtime-policies'

/**
 * Where counters live: `memory` per process (each pod counts alone, so N pods allow N times the
 * limit), `postgres` in the service database, shared by every process.
 */
export type RateLimitStoreKind = 'memory' | 'postgres'

/**
 * RATE_LIMIT_STORE when set, else `postgres` with DATABASE_URL (replicas must count together, or
 * each limit is as many times looser as there are replicas) and `memory` on the embedded database,
 * which only one process opens.
 */
export function rateLimitStore(config: {
  RATE_LIMIT_STORE?: RateLimitStoreKind | undefined
  DATABASE_URL?: string | undefined
}): RateLimitStoreKind {
  return config.RATE_LIMIT_STORE ?? (config.DATABASE_URL ? 'postgres' : 'memory')
}

/** Every limit counts in fixed windows of one minute (the `…_PER_MINUTE` variables). */
const WINDOW_MS = 60_000

export interface RateLimitSetup {
  store: RateLimitStoreKind
  db: Database
}

/**
 * Registers @fastify/rate-limit in `app` (no global limit: routes opt in through `requestLimit`
 * and `failureLimit`) with the configured store. With `postgres`, counters past their window are
 * purged every minute, and first hits still waiting to be counted are counted at close.
 */
export async function registerRateLimits(app: FastifyInstance, setup: RateLimitSetup): Promise<void> {
  const counter =
    setup.store === 'postgres'
      ? createSharedCounter(setup.db, {
          onFlushError: (error) => app.log.error({ err: error }, 'rate limit counts could not be saved'),
        })
      : undefined
  await app.register(fastifyRateLimit, {
    global: false,
    timeWindow: WINDOW_MS,
    store: counter ? postgresStore(counter) : memoryStore(),
  })
  if (counter) {
    app.addHook('onClose', () => counter.close())
    scheduleJob(app, 'rate limit purge', 60, async () => {
      while ((await purgeExpiredRateLimits(setup.db, 1000)) === 1000) {}
    })
  }
}

/** Counters a process keeps in memory at most; the least recently counted go first. */
export const MEMORY_STORE_KEYS = 5000

/**
 * The per-process store: fixed windows, as the plugin's own LocalStore counts. That one answers
 * with its live counter object, which the plugin reads only after an `await`; requests handled in
 * one tick (a parallel burst, pipelined HTTP/1.1) then all read the last count, and a burst of
 * N + k requests was refused whole instead of answering N (issue 19). This one answers a copy.
 */
export function memoryStore(): FastifyRateLimitStoreCtor {
  return class MemoryRateLimitStore implements FastifyRateLimitStore {
    private readonly windows = new Map<string, { count: number; endsAt: number }>()

    incr(key: string, callback: Parameters<FastifyRateLimitStore['incr']>[1], timeWindow: number) {
      const now = Date.now()
      const open = this.windows.get(key)
      const window = open && open.endsAt > now ? open : { count: 0, endsAt: now + timeWindow }
      window.count++
      // Re-inserted last: a Map iterates in insertion order, so the first key is the least recent.
      this.windows.delete(key)
      this.windows.set(key, window)
      if (this.windows.size > MEMORY_STORE_KEYS)
        this.windows.delete(this.windows.keys().next().value as string)
      callback(null, { current: window.count, ttl: window.endsAt - now })
    }

    read(key: string, callback: Parameters<FastifyRateLimitStore['incr']>[1]) {
      const now = Date.now()
      const open = this.windows.get(key)
      callback(
        null,
        open && open.endsAt > now ? { current: open.count, ttl: open.endsAt - now } : { current: 0, ttl: 0 },
      )
    }

    child(): FastifyRateLimitStore {
      return new MemoryRateLimitStore()
    }
  }
}

/**
 * The plugin's custom store interface over the `rate_limits` table (rate-limit-counter.ts),
 * timed by the database clock that every pod shares.
 */
function postgresStore(counter: SharedCounter): FastifyRateLimitStoreCtor {
  const answer =
    (callback: (error: Error | null, result?: { current: number; ttl: number }) => void) =>
    (count: Promise<RateLimitCount> | RateLimitCount) =>
      Promise.resolve(count).then(
        ({ count, ttlMs }) => callback(null, { current: count, ttl: ttlMs }),
        (error: Error) => callback(error),
      )

  return class PostgresRateLimitStore implements FastifyRateLimitStore {
    /** Keeps the counters of route-level limits apart: the plugin uses one key per client IP. */
    private readonly prefix: string

    constructor(_options: unknown, prefix = '') {
      this.prefix = prefix
    }

    incr(key: string, callback: Parameters<FastifyRateLimitStore['incr']>[1], timeWindow: number) {
      answer(callback)(counter.hit(this.prefix + key, timeWindow))
    }

    read(key: string, callback: Parameters<FastifyRateLimitStore['incr']>[1]) {
      answer(callback)(counter.read(this.prefix + key))
    }

    child(options: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
      // The plugin passes the merged limit options; `routeInfo` is empty for createRateLimit().
      const route = (options as { routeInfo?: { method?: unknown; url?: string } }).routeInfo
      return new PostgresRateLimitStore(undefined, route?.url ? `${String(route.method)} ${route.url}:` : '')
    }
  }
}

export interface RateLimitRule {
  /** Names the counter in every key, so that rules sharing a store never share counts. */
  name: string
  /** Allowed per one-minute window; 0 turns the rule off. */
  perMinute: number
  /** Who is counted (a client IP, a tenant, a client id); undefined leaves the request out. */
  subject: (request: FastifyRequest) => string | undefined
}

/** The caller's IP as the proxies we trust report it (TRUST_PROXY); IPv6 by /64, as one host holds one. */
export const clientIp = (request: FastifyRequest): string => {
  // Parsing an IPv6 address costs more than the rest of a limit check; a wallet's requests repeat it.
  let normalized = normalizedIps.get(request.ip)
  if (normalized === undefined) {
    if (normalizedIps.size >= NORMALIZED_IPS) normalizedIps.clear()
    normalized = normalizeIP(request.ip)
    normalizedIps.set(request.ip, normalized)
  }
  return normalized
}
const NORMALIZED_IPS = 10_000
const normalizedIps = new Map<string, string>()

type Limiter = ReturnType<FastifyInstance['createRateLimit']>

function limiters(app: FastifyInstance, rules: RateLimitRule[]) {
  return rules
    .filter((rule) => rule.perMinute > 0)
    .map((rule) => ({
      rule,
      limiter: app.createRateLimit({
        max: rule.perMinute,
        timeWindow: WINDOW_MS,
        keyGenerator: (request) => `${rule.name}:${rule.subject(request)}`,
      }),
    }))
}

/**
 * The limiter's verdict, or undefined when the store fails: a limit then lets requests through
 * (logged) rather than taking the endpoint down with the store.
 */
async function ask(request: FastifyRequest, limiter: Limiter, increment: boolean) {
  try {
    const status = await limiter(request, { increment })
    return status.isAllowed ? undefined : status
  } catch (error) {
    request.log.error({ err: error }, 'rate limit store failed; request let through')
    return undefined
  }
}

/**
 * An `onRequest` hook (before the body is read) that counts the request against every rule and
 * refuses it with 429 and `Retry-After` once a rule's subject is over its limit in this minute.
 */
export function requestLimit(app: FastifyInstance, rules: RateLimitRule[]): onRequestHookHandler {
  const active = limiters(app, rules)
  return async (request) => {
    for (const { rule, limiter } of active) {
      if (rule.subject(request) === undefined) continue
      const status = await ask(request, limiter, true)
      if (status?.isExceeded) throw new RateLimitedError(status.ttlInSeconds)
    }
  }
}

export interface FailureLimit {
  /** Refuses (429) when a rule's subject has failed `perMinute` times in this minute. */
  check(request: FastifyRequest): Promise<void>
  /** Counts one failure against every rule. */
  record(request: FastifyRequest): Promise<void>
}

/**
 * Counts failures only (wrong client secrets): `check` before the attempt, so that a locked-out
 * subject costs no verification, and `record` after it failed. Concurrent attempts may overshoot a
 * limit by the number in flight.
 */
export function failureLimit(app: FastifyInstance, rules: RateLimitRule[]): FailureLimit {
  const active = limiters(app, rules)
  return {
    async check(request) {
      for (const { rule, limiter } of active) {
        if (rule.subject(request) === undefined) continue
        const status = await ask(request, limiter, false)
        if (status && status.remaining === 0) throw new RateLimitedError(status.ttlInSeconds)
      }
    },
    async record(request) {
      for (const { rule, limiter } of active) {
        if (rule.subject(request) !== undefined) await ask(request, limiter, true)
      }
    },
  }
}

/** Rate limits of the wallet endpoints: anyone may call them, with or without a token. */
export interface WalletLimits {
  /** Requests per minute from one client IP to each endpoint; 0: none. */
  perIp: number
  /** Requests per minute to each endpoint of one tenant, all IPs together; 0: none. */
  perTenant: number
}

/**
 * Checklist S-34, S-126: wallet endpoints answer anybody, so floods and guessing (pre-authorized
 * codes, transaction codes, offer ids, tokens, response ids) are bounded per client IP, and
 * optionally per tenant, with 429 and `Retry-After` before the body is even read.
 */
export function walletLimit(app: FastifyInstance, limits: WalletLimits, endpoint: string) {
  return requestLimit(app, [
    { name: `wallet-ip:${endpoint}`, perMinute: limits.perIp, subject: clientIp },
    {
      name: `wallet-tenant:${endpoint}`,
      perMinute: limits.perTenant,
      subject: (req) => (req.params as { tenant?: string }).tenant,
    },
  ])
}

/** The wallet limits of a process's configuration. */
export const walletLimits = (config: {
  RATE_LIMIT_WALLET_PER_MINUTE: number
  RATE_LIMIT_WALLET_TENANT_PER_MINUTE: number
}): WalletLimits => ({
  perIp: config.RATE_LIMIT_WALLET_PER_MINUTE,
  perTenant: config.RATE_LIMIT_WALLET_TENANT_PER_MINUTE,
})
