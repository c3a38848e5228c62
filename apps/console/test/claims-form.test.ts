import { type ClaimField, deriveClaimsJsonSchema } from '@credential-service/core-domain'
import { describe, expect, it } from 'vitest'
import {
  checkClaims,
  claimInputsFromFields,
  claimInputsFromSchema,
  claimRows,
  claimsFromInputs,
  credentialsOf,
  inputOfPath,
  parseClaimValue,
} from '../src/flows/claims-form'

const FIELDS: ClaimField[] = [
  { path: ['given_name'], type: 'string', mandatory: true, display: [{ name: 'Given name', locale: 'en' }] },
  { path: ['age'], type: 'integer' },
  { path: ['age_over_18'], type: 'boolean', defaultValue: true },
  { path: ['birthdate'], type: 'date', display: [{ lang: 'de', label: 'Geburtsdatum' }] },
  { path: ['address', 'street'], type: 'string', mandatory: true },
  { path: ['address', 'locality'], type: 'string' },
  { path: ['nationalities'], type: 'array' },
  { path: ['issued_at'], type: 'date-time' },
]

describe('claims form from a configuration’s fields', () => {
  it('spec §2.3: one input per field, with its type, mandatory flag, display name and default', () => {
    expect(claimInputsFromFields(FIELDS)).toStrictEqual([
      {
        path: ['given_name'],
        type: 'string',
        mandatory: true,
        label: 'Given name (given_name)',
        initial: '',
      },
      { path: ['age'], type: 'integer', mandatory: false, label: 'age', initial: '' },
      { path: ['age_over_18'], type: 'boolean', mandatory: false, label: 'age_over_18', initial: 'true' },
      { path: ['birthdate'], type: 'date', mandatory: false, label: 'Geburtsdatum (birthdate)', initial: '' },
      { path: ['address', 'street'], type: 'string', mandatory: true, label: 'address.street', initial: '' },
      {
        path: ['address', 'locality'],
        type: 'string',
        mandatory: false,
        label: 'address.locality',
        initial: '',
      },
      { path: ['nationalities'], type: 'array', mandatory: false, label: 'nationalities', initial: '' },
      { path: ['issued_at'], type: 'date-time', mandatory: false, label: 'issued_at', initial: '' },
    ])
  })

  it('mdoc: the namespace comes first in the path', () => {
    const inputs = claimInputsFromFields([
      { path: ['family_name'], type: 'string', namespace: 'org.iso.18013.5.1', mandatory: true },
    ])
    expect(inputs.map((input) => input.path)).toStrictEqual([['org.iso.18013.5.1', 'family_name']])
    expect(claimsFromInputs(inputs, ['Mustermann']).claims).toStrictEqual({
      'org.iso.18013.5.1': { family_name: 'Mustermann' },
    })
  })

  it('the texts become a typed, nested claims object; empty inputs are left out', () => {
    const inputs = claimInputsFromFields(FIELDS)
    const texts = [
      'Erika',
      '42',
      'false',
      '1984-01-26',
      'Heidestraße 17',
      '',
      '["DE","FR"]',
      '2026-01-31T12:00:00Z',
    ]
    const { claims, errors } = claimsFromInputs(inputs, texts)
    expect(errors).toStrictEqual({})
    expect(claims).toStrictEqual({
      given_name: 'Erika',
      age: 42,
      age_over_18: false,
      birthdate: '1984-01-26',
      address: { street: 'Heidestraße 17' },
      nationalities: ['DE', 'FR'],
      issued_at: '2026-01-31T12:00:00Z',
    })
    expect(checkClaims(FIELDS, inputs, claims)).toStrictEqual({})
  })

  it('a mandatory input left empty and a text its type cannot read are errors on their inputs', () => {
    const inputs = claimInputsFromFields(FIELDS)
    const { errors } = claimsFromInputs(inputs, [
      '',
      '4.5',
      'maybe',
      '26.01.1984',
      'x',
      '',
      '{}',
      '2026-01-31',
    ])
    expect(errors).toStrictEqual({
      0: 'Required by the configuration',
      1: 'Enter a whole number',
      2: 'Pick yes or no',
      3: 'Enter a date as YYYY-MM-DD',
      6: 'Enter a JSON array',
      7: 'Enter a time as 2026-01-31T12:00:00Z (with Z or an offset)',
    })
  })

  it('the API’s own check (resolveClaims) puts its issues on the inputs they name', () => {
    const inputs = claimInputsFromFields(FIELDS)
    const errors = checkClaims(FIELDS, inputs, { given_name: 'Erika', address: { street: 7 }, _sd: 'x' })
    expect(Object.keys(errors).sort()).toStrictEqual(['-1', '4'])
  })

  it('parses each type', () => {
    expect(parseClaimValue('number', '1.5')).toStrictEqual({ ok: true, value: 1.5 })
    expect(parseClaimValue('object', '{"a":1}')).toStrictEqual({ ok: true, value: { a: 1 } })
    expect(parseClaimValue('object', '[1]')).toStrictEqual({ ok: false, message: 'Enter a JSON object' })
    expect(parseClaimValue('date-time', '2026-01-31T12:00:00+01:00')).toStrictEqual({
      ok: true,
      value: '2026-01-31T12:00:00+01:00',
    })
  })

  it('an issue path names the deepest input at or above it', () => {
    const inputs = claimInputsFromFields(FIELDS)
    expect(inputOfPath(inputs, ['address', 'street'])).toBe(4)
    expect(inputOfPath(inputs, ['nationalities', '0'])).toBe(6)
    expect(inputOfPath(inputs, ['address'])).toBeUndefined()
  })
})

describe('claims form from the claims JSON Schema (a client with issuance:offer only)', () => {
  it('has the inputs the fields give, with the same types and mandatory flags', () => {
    const schema = deriveClaimsJsonSchema({ id: 'pid', fields: FIELDS })
    const fromSchema = claimInputsFromSchema(schema)
    const fromFields = claimInputsFromFields(FIELDS)
    const shape = (inputs: typeof fromFields) =>
      inputs.map(({ path, type, mandatory }) => ({ path, type, mandatory }))
    expect(shape(fromSchema)).toStrictEqual(shape(fromFields))
    expect(fromSchema.map((input) => input.label)).toContain('address.street')
  })

  it('an object field is one JSON input, not a group', () => {
    const schema = deriveClaimsJsonSchema({
      id: 'x',
      fields: [{ path: ['extra'], type: 'object', mandatory: true }],
    })
    expect(claimInputsFromSchema(schema)).toStrictEqual([
      { path: ['extra'], type: 'object', mandatory: true, label: 'extra', initial: '' },
    ])
  })
})

describe('disclosed claims', () => {
  it('OpenID4VP §8.1: one entry per presented credential of each DCQL query, its claims as path → value rows', () => {
    const claims = {
      pid: [{ given_name: 'Erika', address: { locality: 'Berlin' } }],
      mdl: [{ a: 1 }, { a: 2 }],
    }
    expect(credentialsOf(claims).map(({ key, caption }) => [key, caption])).toStrictEqual([
      ['pid/0', 'Credential pid'],
      ['mdl/0', 'Credential mdl (1 of 2)'],
      ['mdl/1', 'Credential mdl (2 of 2)'],
    ])
    expect(claimRows(claims.pid[0])).toStrictEqual([
      { path: 'given_name', value: 'Erika' },
      { path: 'address.locality', value: 'Berlin' },
    ])
  })
})
