import { describe, expect, it } from 'vitest'
import { selectClaims } from './claims-path'

const claims = {
  given_name: 'Erika',
  address: { locality: 'Berlin', street_address: null },
  nationalities: ['DE', 'FR'],
  degrees: [{ type: 'Bachelor' }, { type: 'Master', year: 2020 }],
  empty: [],
}

describe('claims path pointers (OpenID4VP §7.1)', () => {
  it('OpenID4VP §7.1: a string selects the member of that name, nested', () => {
    expect(selectClaims(claims, ['given_name'])).toStrictEqual(['Erika'])
    expect(selectClaims(claims, ['address', 'locality'])).toStrictEqual(['Berlin'])
    expect(selectClaims(claims, ['address'])).toStrictEqual([claims.address])
  })

  it('OpenID4VP §7.1: a member whose value is null is selected (present), a missing one is not', () => {
    expect(selectClaims(claims, ['address', 'street_address'])).toStrictEqual([null])
    expect(selectClaims(claims, ['family_name'])).toBeUndefined()
    expect(selectClaims(claims, ['address', 'postal_code'])).toBeUndefined()
  })

  it('OpenID4VP §7.1: null selects every element of an array, and the next component applies to each', () => {
    expect(selectClaims(claims, ['nationalities', null])).toStrictEqual(['DE', 'FR'])
    expect(selectClaims(claims, ['degrees', null, 'type'])).toStrictEqual(['Bachelor', 'Master'])
    // Elements without the member add nothing; the others are still selected.
    expect(selectClaims(claims, ['degrees', null, 'year'])).toStrictEqual([2020])
    expect(selectClaims(claims, ['degrees', null, 'month'])).toBeUndefined()
  })

  it('OpenID4VP §7.1: null over an empty array selects nothing, so the claim is absent', () => {
    expect(selectClaims(claims, ['empty', null])).toBeUndefined()
  })

  it('OpenID4VP §7.1: a non-negative integer selects the element at that index; past the end nothing', () => {
    expect(selectClaims(claims, ['nationalities', 0])).toStrictEqual(['DE'])
    expect(selectClaims(claims, ['nationalities', 1])).toStrictEqual(['FR'])
    expect(selectClaims(claims, ['degrees', 1, 'type'])).toStrictEqual(['Master'])
    expect(selectClaims(claims, ['nationalities', 2])).toBeUndefined()
  })

  it('OpenID4VP §7.1: a component over the wrong kind of value aborts', () => {
    // A string over an array or a primitive, null or an index over an object or a primitive.
    expect(selectClaims(claims, ['nationalities', 'length'])).toBeUndefined()
    expect(selectClaims(claims, ['given_name', 'length'])).toBeUndefined()
    expect(selectClaims(claims, ['address', null])).toBeUndefined()
    expect(selectClaims(claims, ['address', 0])).toBeUndefined()
    expect(selectClaims(claims, ['given_name', null])).toBeUndefined()
    // One element of the wrong kind aborts the whole selection.
    expect(selectClaims({ list: [{ a: 1 }, 'x'] }, ['list', null, 'a'])).toBeUndefined()
    expect(selectClaims(claims, ['nationalities', -1])).toBeUndefined()
    expect(selectClaims(claims, ['nationalities', 0.5])).toBeUndefined()
  })

  it('only own members are claims: inherited names select nothing', () => {
    expect(selectClaims(claims, ['constructor'])).toBeUndefined()
    expect(selectClaims(claims, ['address', 'toString'])).toBeUndefined()
    expect(selectClaims(claims, ['__proto__'])).toBeUndefined()
  })
})
