import { describe, expect, it } from 'vitest'
import { newId } from '../src/ids'

describe('newId', () => {
  it('is the prefix and the asked number of base-36 characters', () => {
    expect(newId('ses')).toMatch(/^ses_[0-9a-z]{20}$/)
    expect(newId('req', 16)).toMatch(/^req_[0-9a-z]{16}$/)
  })

  it('never repeats and uses the whole alphabet evenly across pool refills', () => {
    // 5000 ids × 20 chars cross the 4 KiB random pool boundary many times.
    const ids = Array.from({ length: 5000 }, () => newId('x'))
    expect(new Set(ids).size).toBe(ids.length)
    const counts = new Map<string, number>()
    for (const id of ids) for (const char of id.slice(2)) counts.set(char, (counts.get(char) ?? 0) + 1)
    expect(counts.size).toBe(36)
    const expected = (5000 * 20) / 36
    for (const count of counts.values()) expect(Math.abs(count - expected) / expected).toBeLessThan(0.1)
  })
})
