import bcrypt from 'bcryptjs'
import { describe, expect, it } from 'vitest'
import { createSecretVerifier, hashSecret, isLegacySecretHash } from '../src'

// 72 bytes that two secrets share; bcrypt itself reads no further.
const SHARED = 'x'.repeat(72)

/**
 * Median CPU time of this process over `runs` calls, in ms: bcryptjs runs here, and unlike wall
 * time, CPU time does not stretch when other processes share the machine.
 */
async function medianMs(runs: number, call: () => Promise<unknown>): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = process.cpuUsage()
    await call()
    const used = process.cpuUsage(start)
    times.push((used.user + used.system) / 1000)
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)] as number
}

describe('client secret hashes', () => {
  it('issue 11: two secrets sharing their first 72 bytes are not interchangeable', async () => {
    const verify = createSecretVerifier()
    const hash = await hashSecret(`${SHARED}-first`)
    expect(isLegacySecretHash(hash)).toBe(false)
    expect(await verify(`${SHARED}-second`, hash)).toBe(false)
    expect(await verify(SHARED, hash)).toBe(false)
    expect(await verify(`${SHARED}-first`, hash)).toBe(true)
    // Multi-byte characters: 36 × 'é' is 72 bytes of UTF-8.
    const accented = await hashSecret(`${'é'.repeat(36)}a`)
    expect(await verify(`${'é'.repeat(36)}b`, accented)).toBe(false)
  })

  it('issue 11: hashes written before pre-hashing (bcrypt of the secret) still verify', async () => {
    const verify = createSecretVerifier()
    const legacy = await bcrypt.hash('an-older-client-secret', 4)
    expect(isLegacySecretHash(legacy)).toBe(true)
    expect(await verify('an-older-client-secret', legacy)).toBe(true)
    expect(await verify('another-client-secret', legacy)).toBe(false)
  })

  it('issue 11: a remembered success does not make a wrong secret cheaper than bcrypt', async () => {
    const verify = createSecretVerifier()
    const hash = await hashSecret('the-right-client-secret')
    expect(await verify('the-right-client-secret', hash)).toBe(true)
    const remembered = await medianMs(3, () => verify('the-right-client-secret', hash))
    const wrong = await medianMs(3, () => verify('a-wrong-client-secret', hash))
    expect(await verify('a-wrong-client-secret', hash)).toBe(false)
    // bcrypt at cost 10 takes tens of ms; a remembered success well under one.
    expect(wrong).toBeGreaterThan(remembered * 10)
  })

  it('issue 11: an unknown client (no hash) costs a bcrypt compare like a wrong secret', async () => {
    const verify = createSecretVerifier()
    const hash = await hashSecret('some-client-secret-0123')
    await verify('warm-up', undefined) // the first unknown client also makes the dummy hash
    const wrong = await medianMs(3, () => verify('a-wrong-secret', hash))
    const unknown = await medianMs(3, () => verify('a-wrong-secret', undefined))
    expect(await verify('some-client-secret-0123', undefined)).toBe(false)
    expect(unknown).toBeGreaterThan(wrong / 2)
  })
})
