import type { DcqlQuery } from '@credential-service/core-domain'
import { describe, expect, it } from 'vitest'
import { checkClaims } from './verify'

type CredentialQuery = DcqlQuery['credentials'][number]

const query = (claims: CredentialQuery['claims'], claimSets?: string[][]): CredentialQuery => ({
  id: 'pid',
  format: 'dc+sd-jwt',
  meta: { vct_values: ['urn:example:pid'] },
  claims,
  ...(claimSets ? { claim_sets: claimSets } : {}),
})

const disclosed = {
  given_name: 'Erika',
  nationalities: ['DE', 'FR'],
  degrees: [{ type: 'Bachelor' }, { type: 'Master' }],
  children: [],
}

/** The reason the claims are refused, or 'ok'. */
const outcome = (credential: CredentialQuery) => {
  try {
    checkClaims(credential, disclosed)
    return 'ok'
  } catch (error) {
    return (error as Error).message
  }
}

describe('DCQL claims of a presentation (OpenID4VP §6.3, §7.1)', () => {
  it('OpenID4VP §7.1: a path with null selects every array element; the claim is there when one is', () => {
    expect(outcome(query([{ path: ['nationalities', null] }]))).toBe('ok')
    expect(outcome(query([{ path: ['degrees', null, 'type'] }]))).toBe('ok')
    expect(outcome(query([{ path: ['children', null] }]))).toBe(
      'requested claims missing or not matching: ["children",null]',
    )
  })

  it('OpenID4VP §6.3: with values, one selected value must be one of them', () => {
    expect(outcome(query([{ path: ['nationalities', null], values: ['FR'] }]))).toBe('ok')
    expect(outcome(query([{ path: ['degrees', null, 'type'], values: ['Master', 'PhD'] }]))).toBe('ok')
    expect(outcome(query([{ path: ['nationalities', null], values: ['IT'] }]))).toBe(
      'requested claims missing or not matching: ["nationalities",null]',
    )
    expect(outcome(query([{ path: ['given_name'], values: ['Erika'] }]))).toBe('ok')
  })

  it('OpenID4VP §7.1: an index selects one element; a name over an array, or an inherited name, nothing', () => {
    expect(outcome(query([{ path: ['nationalities', 1], values: ['FR'] }]))).toBe('ok')
    expect(outcome(query([{ path: ['nationalities', 2] }]))).toBe(
      'requested claims missing or not matching: ["nationalities",2]',
    )
    expect(outcome(query([{ path: ['nationalities', 'length'] }, { path: ['constructor'] }]))).toBe(
      'requested claims missing or not matching: ["nationalities","length"], ["constructor"]',
    )
  })

  it('OpenID4VP §6.4.1: one claim set satisfied is enough', () => {
    const claims = [
      { id: 'name', path: ['family_name'] },
      { id: 'nationality', path: ['nationalities', null], values: ['DE'] },
    ]
    expect(outcome(query(claims, [['name'], ['nationality']]))).toBe('ok')
    expect(outcome(query(claims, [['name']]))).toBe('no claim set of the query is satisfied')
  })
})
