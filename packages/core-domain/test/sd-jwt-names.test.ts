import { describe, expect, it } from 'vitest'
import { zCredentialConfigInput } from '../src/contract/credential-config'
import { resolveClaims } from '../src/rules/claims-schema'
import { checkCredentialConfig } from '../src/rules/credential-config'
import { sdJwtStructureIssues } from '../src/rules/sd-jwt-names'

const message = (name: string) =>
  `'${name}' is an SD-JWT structure name (RFC 9901 §4.2); claims cannot use it`

const config = (fields: unknown[], format: 'dc+sd-jwt' | 'mso_mdoc' = 'dc+sd-jwt') =>
  zCredentialConfigInput.parse({
    id: 'pid',
    config: format === 'dc+sd-jwt' ? { format, vct: 'urn:eudi:pid:1' } : { format, docType: 'org.example.1' },
    keyChainId: 'keys',
    fields,
  })

describe('S-129 RFC 9901 §4.2: SD-JWT structure names never in claims', () => {
  it('names each _sd, _sd_alg and ... member at any depth, in objects and arrays', () => {
    expect(
      sdJwtStructureIssues(
        {
          name: 'Erika',
          address: { _sd: ['x'], street: 'Heidestraße 17' },
          list: ['a', { '...': 'd' }, [{ deep: { _sd_alg: 'sha-256' } }]],
        },
        'claims',
      ),
    ).toStrictEqual([
      { path: 'claims.address._sd', message: message('_sd') },
      { path: 'claims.list.1....', message: message('...') },
      { path: 'claims.list.2.0.deep._sd_alg', message: message('_sd_alg') },
    ])
    expect(sdJwtStructureIssues({ sd: 1, '_sd ': 2, list: ['...', '_sd'] }, 'claims')).toStrictEqual([])
  })

  it('a field named _sd, _sd_alg or ... (also nested, also as mdoc namespace) is refused at configuration time', () => {
    const fields = [
      { path: ['_sd'], type: 'string' },
      { path: ['address', '_sd_alg'], type: 'string' },
      { path: ['list', '...'], type: 'string' },
    ]
    expect(checkCredentialConfig(config(fields))).toStrictEqual([
      { path: 'body.fields.0.path', message: message('_sd') },
      { path: 'body.fields.1.path', message: message('_sd_alg') },
      { path: 'body.fields.2.path', message: message('...') },
    ])
    expect(
      checkCredentialConfig(config([{ path: ['age'], type: 'integer', namespace: '_sd' }], 'mso_mdoc')),
    ).toStrictEqual([{ path: 'body.fields.0.path', message: message('_sd') }])
    expect(checkCredentialConfig(config([{ path: ['address', 'street'], type: 'string' }]))).toStrictEqual([])
  })

  it('a default value holding _sd or {"...": digest} is refused at configuration time', () => {
    const fields = [
      { path: ['address'], type: 'object', defaultValue: { _sd: ['digest'] } },
      { path: ['nationalities'], type: 'array', defaultValue: ['DE', { '...': 'digest' }] },
    ]
    expect(checkCredentialConfig(config(fields))).toStrictEqual([
      { path: 'body.fields.0.defaultValue._sd', message: message('_sd') },
      { path: 'body.fields.1.defaultValue.1....', message: message('...') },
    ])
  })

  it('resolveClaims (offer, login, attribute provider) refuses object and array values that hold them', () => {
    const fields = config([
      { path: ['address'], type: 'object' },
      { path: ['nationalities'], type: 'array' },
    ])
    expect(resolveClaims(fields, { address: { _sd: ['x'] } }, 'body.claims.pid')).toStrictEqual({
      ok: false,
      issues: [{ path: 'body.claims.pid.address._sd', message: message('_sd') }],
    })
    expect(resolveClaims(fields, { nationalities: [{ '...': 'd' }] })).toStrictEqual({
      ok: false,
      issues: [{ path: 'claims.nationalities.0....', message: message('...') }],
    })
    expect(resolveClaims(fields, { address: { street: 'x' }, nationalities: ['DE'] })).toStrictEqual({
      ok: true,
      claims: { address: { street: 'x' }, nationalities: ['DE'] },
    })
  })
})
