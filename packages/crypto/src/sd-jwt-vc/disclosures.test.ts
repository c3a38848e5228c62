import { createHash } from 'node:crypto'
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import { describe, expect, it } from 'vitest'
import { checkDisclosures } from './disclosures'

const encode = (items: unknown[]) => Buffer.from(JSON.stringify(items)).toString('base64url')
const hashOf = (encoded: string, alg = 'sha256') => createHash(alg).update(encoded).digest('base64url')
const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
/** The check reads the payload only (the signature is the library's job): any signature part does. */
const sdJwt = (payload: Record<string, unknown>, disclosures: string[], kb = 'kb.jwt.here') =>
  [`${part({ alg: 'ES256', typ: 'dc+sd-jwt' })}.${part(payload)}.c2ln`, ...disclosures, kb].join('~')

const ageOver18 = encode(['salt-1', 'age_over_18', true])
const givenName = encode(['salt-2', 'given_name', 'Erika'])
const element = encode(['salt-3', 'DE'])

describe('checkDisclosures (RFC 9901 §7.1)', () => {
  it('S-130 RFC 9901 §7.1: an SD-JWT of @sd-jwt with nested and array disclosures passes, whole and in part', async () => {
    const issuer = new SDJwtVcInstance({
      signer: async () => 'c2ln',
      signAlg: 'ES256',
      hasher: digest,
      hashAlg: 'sha-256',
      saltGenerator: generateSalt,
    })
    const credential = await issuer.issue(
      {
        iss: 'https://issuer.example.com',
        vct: 'urn:example:1',
        iat: 1,
        given_name: 'Erika',
        address: { street: 'Heidestraße 17', locality: 'Köln' },
        nationalities: ['DE', 'FR'],
      },
      {
        _sd: ['given_name', 'address', 'nationalities'],
        _sd_decoy: 2,
        address: { _sd: ['street', 'locality'], _sd_decoy: 1 },
        nationalities: { _sd: [0, 1] },
      } as never,
    )
    expect(checkDisclosures(credential)).toBeUndefined()
    const [jwt, ...disclosures] = credential.split('~')
    expect(disclosures.filter(Boolean)).toHaveLength(7)
    // The holder keeps the address and one of its members only.
    const chosen = disclosures.filter((encoded) => {
      const text = Buffer.from(encoded, 'base64url').toString()
      return text.includes('"address"') || text.includes('"street"')
    })
    expect(chosen).toHaveLength(2)
    expect(checkDisclosures([jwt, ...chosen, ''].join('~'))).toBeUndefined()
  })

  it('S-130 RFC 9901 §7.1: a disclosure no digest references is refused', () => {
    const payload = { iss: 'x', _sd: [hashOf(givenName)], _sd_alg: 'sha-256' }
    expect(checkDisclosures(sdJwt(payload, [givenName]))).toBeUndefined()
    expect(checkDisclosures(sdJwt(payload, [givenName, ageOver18]))).toBe(
      'a disclosure is not referenced by any digest (RFC 9901 §7.1)',
    )
    // Without a KB-JWT the last part is empty.
    expect(checkDisclosures(sdJwt(payload, [ageOver18], ''))).toBe(
      'a disclosure is not referenced by any digest (RFC 9901 §7.1)',
    )
  })

  it('F-09 RFC 9901 §4.2.5: digests without a disclosure (decoys, undisclosed claims) are fine', () => {
    const payload = { _sd: [hashOf(givenName), hashOf(encode(['decoy']))], list: [{ '...': 'x' }] }
    expect(checkDisclosures(sdJwt(payload, []))).toBeUndefined()
  })

  it('F-11 RFC 9901 §7.1: a digest referenced twice, or the same disclosure presented twice, is refused', () => {
    expect(checkDisclosures(sdJwt({ _sd: [hashOf(givenName), hashOf(givenName)] }, [givenName]))).toBe(
      'a digest appears more than once (RFC 9901 §7.1)',
    )
    expect(checkDisclosures(sdJwt({ _sd: [hashOf(element)], list: [{ '...': hashOf(element) }] }, []))).toBe(
      'a digest appears more than once (RFC 9901 §7.1)',
    )
    expect(checkDisclosures(sdJwt({ _sd: [hashOf(givenName)] }, [givenName, givenName]))).toBe(
      'a disclosure is presented twice (RFC 9901 §7.1)',
    )
  })

  it('S-76 RFC 9901 §7.1: a disclosure named _sd, _sd_alg or ... is refused', () => {
    for (const name of ['_sd', '_sd_alg', '...']) {
      const disclosure = encode(['salt', name, ['x']])
      expect(checkDisclosures(sdJwt({ _sd: [hashOf(disclosure)] }, [disclosure]))).toBe(
        `a disclosure has the claim name '${name}' (RFC 9901 §7.1)`,
      )
    }
  })

  it('S-76 RFC 9901 §7.1: wrong arity, for the array or the object, is refused', () => {
    expect(checkDisclosures(sdJwt({ _sd: [hashOf(element)] }, [element]))).toBe(
      'an _sd digest refers to a [salt, value] disclosure (RFC 9901 §7.1)',
    )
    expect(checkDisclosures(sdJwt({ list: [{ '...': hashOf(givenName) }] }, [givenName]))).toBe(
      'an array element digest refers to a [salt, name, value] disclosure (RFC 9901 §7.1)',
    )
    const four = encode(['salt', 'a', 1, 2])
    expect(checkDisclosures(sdJwt({ _sd: [hashOf(four)] }, [four]))).toBe(
      'a disclosure is not [salt, name, value] or [salt, value] (RFC 9901 §7.1)',
    )
    expect(checkDisclosures(sdJwt({ list: [{ '...': hashOf(element) }] }, [element]))).toBeUndefined()
  })

  it('S-76 RFC 9901 §7.1: a disclosed name its object has in plain text is refused', () => {
    expect(checkDisclosures(sdJwt({ given_name: 'Max', _sd: [hashOf(givenName)] }, [givenName]))).toBe(
      "the disclosed claim 'given_name' is already in its object (RFC 9901 §7.1)",
    )
  })

  it('S-130 RFC 9901 §7.1: digests inside disclosed values count, recursively', () => {
    const street = encode(['salt-4', 'street', 'Heidestraße 17'])
    const address = encode(['salt-5', 'address', { _sd: [hashOf(street)] }])
    const payload = { _sd: [hashOf(address)] }
    expect(checkDisclosures(sdJwt(payload, [address, street]))).toBeUndefined()
    // The street without its address is referenced by nothing the verifier can see.
    expect(checkDisclosures(sdJwt(payload, [street]))).toBe(
      'a disclosure is not referenced by any digest (RFC 9901 §7.1)',
    )
  })

  it('F-06 RFC 9901 §4.1.1: _sd_alg sha-512 works; an unknown or nested _sd_alg is refused', () => {
    const payload = { _sd_alg: 'sha-512', _sd: [hashOf(givenName, 'sha512')] }
    expect(checkDisclosures(sdJwt(payload, [givenName]))).toBeUndefined()
    expect(checkDisclosures(sdJwt({ ...payload, _sd_alg: 'md5' }, [givenName]))).toBe(
      "_sd_alg 'md5' is not supported (RFC 9901 §7.1)",
    )
    expect(checkDisclosures(sdJwt({ address: { _sd_alg: 'sha-256' } }, []))).toBe(
      '_sd_alg is not at the top level (RFC 9901 §7.1)',
    )
  })
})
