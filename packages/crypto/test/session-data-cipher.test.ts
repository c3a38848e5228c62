import { describe, expect, it } from 'vitest'
import { DecryptionError } from '../src/json-cipher'
import { createJwkCipher } from '../src/jwk-cipher'
import { createSessionDataCipher } from '../src/session-data-cipher'

const SECRET = 'session-data-test-master-secret-0123456789'
const cipher = createSessionDataCipher(SECRET)
const claims = { pid: { given_name: 'Quenby-Ottoline', age_over_18: true } }

// Issue 14: offer claims and presentation results encrypted at rest.
describe('session data at rest (AES-256-GCM, key from MASTER_SECRET)', () => {
  it('round-trips; the stored text holds no claim value; each value gets a fresh IV', () => {
    const stored = cipher.sealClaims('t1', 'ses_1', claims)
    expect(stored).toMatch(/^v1\.[\w-]{16}\.[\w-]+\.[\w-]{22}$/)
    expect(stored).not.toContain('Quenby')
    expect(cipher.sealClaims('t1', 'ses_1', claims)).not.toBe(stored)
    expect(cipher.openClaims('t1', 'ses_1', stored)).toStrictEqual(claims)
    const result = { pid: [{ vct: 'urn:x', given_name: 'Quenby-Ottoline' }] }
    expect(cipher.openResult('t1', 'ses_1', cipher.sealResult('t1', 'ses_1', result))).toStrictEqual(result)
  })

  it('a ciphertext moved to another session or tenant does not decrypt: DecryptionError naming the row', () => {
    const stored = cipher.sealClaims('t1', 'ses_1', claims)
    expect(() => cipher.openClaims('t1', 'ses_2', stored)).toThrow(DecryptionError)
    expect(() => cipher.openClaims('t2', 'ses_1', stored)).toThrow(
      'cannot decrypt the offer claims of session ["t2","ses_1"]: wrong MASTER_SECRET or tampered data',
    )
    // The AAD encodes the two ids unambiguously: no tenant/session split gives the same data.
    const split = cipher.sealClaims('a/b', 'c', claims)
    expect(() => cipher.openClaims('a', 'b/c', split)).toThrow(DecryptionError)
    const tampered = stored.replace(/\.([\w-])/, (_m, c: string) => `.${c === 'A' ? 'B' : 'A'}`)
    expect(() => cipher.openClaims('t1', 'ses_1', tampered)).toThrow(DecryptionError)
    expect(() => cipher.openClaims('t1', 'ses_1', '{"pid":{}}')).toThrow(DecryptionError)
  })

  it('each kind has its own key: claims do not open as a result, nor with the JWK key', () => {
    const stored = cipher.sealClaims('t1', 'ses_1', claims)
    expect(() => cipher.openResult('t1', 'ses_1', stored)).toThrow(
      'cannot decrypt the presentation result of session ["t1","ses_1"]',
    )
    expect(() => createJwkCipher(SECRET).decrypt(stored, JSON.stringify(['t1', 'ses_1']))).toThrow(
      DecryptionError,
    )
  })

  it('another MASTER_SECRET cannot read them', () => {
    const stored = cipher.sealResult('t1', 'ses_1', { pid: [{ given_name: 'Quenby' }] })
    const other = createSessionDataCipher('another-master-secret-0123456789abcdef')
    expect(() => other.openResult('t1', 'ses_1', stored)).toThrow(/wrong MASTER_SECRET or tampered data/)
  })
})
