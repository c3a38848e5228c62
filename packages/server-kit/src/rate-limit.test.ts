import { describe, expect, it } from 'vitest'
import { rateLimitStore } from './rate-limit'

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
