import type { FastifyRateLimitStore } from '@fastify/rate-limit'
import type { FastifyRequest } from 'fastify'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { clientIp, MEMORY_STORE_KEYS, memoryStore, rateLimitStore } from './rate-limit'

describe('rateLimitStore', () => {
  const url = 'postgres://db.internal/credentials'

  it('issue 19: PostgreSQL shares the counters of every replica by default', () => {
    expect(rateLimitStore({ DATABASE_URL: url })).toBe('postgres')
  })

  it('issue 19: the embedded database, opened by one process only, counts in memory', () => {
    expect(rateLimitStore({})).toBe('memory')
  })

  it('issue 19: RATE_LIMIT_STORE is honoured either way', () => {
    expect(rateLimitStore({ DATABASE_URL: url, RATE_LIMIT_STORE: 'memory' })).toBe('memory')
    expect(rateLimitStore({ RATE_LIMIT_STORE: 'postgres' })).toBe('postgres')
  })
})

describe('the memory store', () => {
  const WINDOW = 60_000
  type Count = { current: number; ttl: number }
  const incr = (store: FastifyRateLimitStore, key: string) => {
    let count: Count | undefined
    store.incr(key, (_error, result) => (count = result), WINDOW, 3)
    return count as Count
  }
  const open = () => {
    const Store = memoryStore()
    return new Store({})
  }

  afterEach(() => vi.useRealTimers())

  it('issue 19: each count is its own answer, so requests counted in one tick see 1, 2, 3…', () => {
    const store = open()
    const counts = [incr(store, 'ip'), incr(store, 'ip'), incr(store, 'ip')]
    expect(counts.map((count) => count.current)).toStrictEqual([1, 2, 3])
  })

  it('counts in fixed windows: a key starts again once its window has ended', () => {
    vi.useFakeTimers({ now: 0 })
    const store = open()
    incr(store, 'ip')
    vi.setSystemTime(WINDOW - 1)
    expect(incr(store, 'ip')).toStrictEqual({ current: 2, ttl: 1 })
    vi.setSystemTime(WINDOW)
    expect(incr(store, 'ip')).toStrictEqual({ current: 1, ttl: WINDOW })
  })

  it(`keeps at most ${MEMORY_STORE_KEYS} keys, dropping the least recently counted`, () => {
    const store = open()
    for (let n = 0; n < MEMORY_STORE_KEYS; n++) incr(store, `ip-${n}`)
    incr(store, 'ip-0')
    incr(store, 'one more')
    expect(incr(store, 'ip-0').current).toBe(3)
    expect(incr(store, 'ip-1').current).toBe(1)
  })
})

describe('clientIp', () => {
  const of = (ip: string) => clientIp({ ip } as FastifyRequest)

  it('S-126: one IPv6 /64 is one subject, whatever its spelling; IPv4 addresses stay apart', () => {
    expect(of('2001:db8:1:2::9')).toBe(of('2001:0db8:0001:0002:ffff:0:0:1'))
    expect(of('2001:db8:1:2::9')).toBe(of('2001:db8:1:2::9'))
    expect(of('2001:db8:1:3::9')).not.toBe(of('2001:db8:1:2::9'))
    expect(of('192.0.2.1')).toBe('192.0.2.1')
    expect(of('192.0.2.2')).not.toBe(of('192.0.2.1'))
  })
})
