import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createServerNonces } from './server-nonces'

describe('stateless DPoP nonces (RFC 9449 §8, checklist I-47, S-44)', () => {
  const key = randomBytes(32)
  let now = new Date('2026-01-01T00:00:00Z')
  const nonces = createServerNonces(key, () => now)

  it('a nonce is valid for its tenant in its window and the next, then stale', () => {
    now = new Date('2026-01-01T00:00:00Z')
    const nonce = nonces.issue('acme')
    expect(nonces.valid('acme', nonce)).toBe(true)
    now = new Date('2026-01-01T00:02:30Z')
    expect(nonces.valid('acme', nonce)).toBe(true)
    now = new Date('2026-01-01T00:04:30Z')
    expect(nonces.valid('acme', nonce)).toBe(false)
  })

  it('another tenant, another key, a forged MAC or a non-string is refused', () => {
    now = new Date('2026-01-01T00:00:00Z')
    const nonce = nonces.issue('acme')
    expect(nonces.valid('other', nonce)).toBe(false)
    expect(createServerNonces(randomBytes(32), () => now).valid('acme', nonce)).toBe(false)
    expect(nonces.valid('acme', `${nonce.split('.')[0]}.${'A'.repeat(24)}`)).toBe(false)
    for (const value of [undefined, 42, '', '.', 'x'.repeat(100)])
      expect(nonces.valid('acme', value)).toBe(false)
  })
})
