import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createCNonces } from './c-nonces'

describe('stateless c_nonces', () => {
  const key = randomBytes(32)
  let clock = new Date('2026-12-07T12:00:00Z')
  const nonces = createCNonces(key, 300, () => clock)

  it('OpenID4VCI 1.0 §7.2 (I-50): each call answers a new, unpredictable value', () => {
    const made = new Set(Array.from({ length: 100 }, () => nonces.issue('t1')))
    expect(made.size).toBe(100)
    for (const nonce of made) expect(nonce).toMatch(/^[0-9a-z]+\.[\w-]{24}\.[\w-]{22}$/)
  })

  it('I-51, S-21: accepted for its tenant while it lives; refused for another tenant, after expiry, or with another key', () => {
    clock = new Date('2026-12-07T12:00:00Z')
    const nonce = nonces.issue('t1')
    expect(nonces.check('t1', nonce)).toEqual({ value: nonce, expiresAt: new Date('2026-12-07T12:05:00Z') })
    expect(nonces.check('t2', nonce)).toBeUndefined()
    expect(createCNonces(randomBytes(32), 300, () => clock).check('t1', nonce)).toBeUndefined()
    clock = new Date('2026-12-07T12:04:59Z')
    expect(nonces.check('t1', nonce)).toBeDefined()
    clock = new Date('2026-12-07T12:05:00Z')
    expect(nonces.check('t1', nonce)).toBeUndefined()
  })

  it('S-21: a changed expiry, random part or MAC, and values of another shape, are refused', () => {
    clock = new Date('2026-12-07T12:00:00Z')
    const nonce = nonces.issue('t1')
    const [expiry, random, mac] = nonce.split('.') as [string, string, string]
    const later = (Number.parseInt(expiry, 36) + 3600).toString(36)
    const flip = (text: string) => (text[0] === 'A' ? 'B' : 'A') + text.slice(1)
    for (const forged of [
      `${later}.${random}.${mac}`,
      `${expiry}.${flip(random)}.${mac}`,
      `${expiry}.${random}.${flip(mac)}`,
      `${expiry}.${random}.${mac}=`,
      `${expiry}.${random}`,
      `${nonce}.x`,
      '',
      'made-up',
      randomBytes(24).toString('base64url'),
      `${expiry}.${random}.${mac}${'A'.repeat(100)}`,
    ])
      expect(nonces.check('t1', forged), forged).toBeUndefined()
  })
})
