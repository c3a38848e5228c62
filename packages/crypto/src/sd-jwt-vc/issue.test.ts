import { base64url, decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import { testSigner } from '../../test/test-signer'
import { issueSdJwtVc } from './issue'

async function issue(disclosable: string[][]) {
  const signer = await testSigner()
  const credential = await issueSdJwtVc({
    signer,
    issuer: 'https://issuer.example/issuers/t',
    vct: 'urn:example:1',
    issuedAt: new Date(),
    expiresAt: new Date(Date.now() + 60_000),
    claims: { given_name: 'Erika', family_name: 'Mustermann', address: { locality: 'Berlin', street: 'X' } },
    disclosable,
    decoys: 2,
  })
  const [jwt = '', ...rest] = credential.split('~')
  const disclosures = rest
    .filter(Boolean)
    .map((encoded) => JSON.parse(new TextDecoder().decode(base64url.decode(encoded))) as unknown[])
  return { payload: decodeJwt(jwt), disclosures }
}

describe('SD-JWT VC issuance', () => {
  it('F-07 / RFC 9901 §4.2.1, §9.3: every salt is at least 128 random bits, none repeats', async () => {
    const { disclosures } = await issue([['given_name'], ['family_name'], ['address', 'locality']])
    expect(disclosures).toHaveLength(3)
    const salts = disclosures.map((disclosure) => disclosure[0] as string)
    for (const salt of salts) expect(base64url.decode(salt).length).toBeGreaterThanOrEqual(16)
    const again = await issue([['given_name'], ['family_name'], ['address', 'locality']])
    const all = [...salts, ...again.disclosures.map((disclosure) => disclosure[0] as string)]
    expect(new Set(all).size).toBe(all.length)
  })

  it('F-10 / SD-JWT VC §3.2.2.4: nothing disclosable means no _sd, no _sd_alg, no decoys, no disclosures', async () => {
    const { payload, disclosures } = await issue([])
    expect(disclosures).toStrictEqual([])
    expect(JSON.stringify(payload)).not.toContain('_sd')
    expect(payload.address).toStrictEqual({ locality: 'Berlin', street: 'X' })
  })

  it('F-09: decoys go only where claims are disclosable (a nested object keeps its own)', async () => {
    const { payload } = await issue([['address', 'locality']])
    expect(payload._sd).toBeUndefined()
    const address = payload.address as { _sd: string[]; street: string }
    expect(address.street).toBe('X')
    expect(address._sd).toHaveLength(3) // one claim + two decoys
  })
})
