import {
  type CredentialConfigInput,
  checkCredentialConfig,
  zCredentialConfigInput,
} from '@credential-service/core-domain'
import { describe, expect, it } from 'vitest'
import { configFile, readConfigFile } from './config-file'
import { configBody, configInputNames, configValues, parsePath, pathText } from './config-values'

const sdJwt: CredentialConfigInput = {
  id: 'pid',
  description: 'Personal ID',
  config: {
    format: 'dc+sd-jwt',
    vct: 'urn:eudi:pid:1',
    display: [{ name: 'Personal ID', locale: 'en-US', logo: { uri: 'https://example.com/l.png' } }],
  },
  fields: [
    {
      path: ['given_name'],
      type: 'string',
      mandatory: true,
      disclosable: true,
      display: [{ name: 'Given name', locale: 'en-US' }],
    },
    { path: ['address', 'locality'], type: 'string', disclosable: true },
    { path: ['age'], type: 'integer', defaultValue: 42 },
    { path: ['x.y', 'z'], type: 'object', defaultValue: { a: 1 } },
  ],
  keyChainId: 'signing',
  lifetimeSeconds: 3600,
  keyBinding: true,
  statusManagement: true,
  batchSize: 2,
  refreshTokens: false,
  dpop: 'required',
  walletAttestation: 'optional',
  userAuthentication: { loginProviderId: 'idp', claims: { given_name: 'given_name' } },
  keyAttestation: { required: true, keyStorage: ['iso_18045_high'] },
}

const mdoc: CredentialConfigInput = {
  id: 'mdl',
  config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
  fields: [
    { path: ['family_name'], type: 'string', namespace: 'org.iso.18013.5.1', mandatory: true },
    { path: ['age_over_18'], type: 'boolean', namespace: 'org.iso.18013.5.1', defaultValue: true },
    { path: ['birth_date'], type: 'date', namespace: 'org.iso.18013.5.1', defaultValue: '1990-01-01' },
  ],
  keyChainId: 'signing',
  lifetimeSeconds: 86400,
  keyBinding: true,
  statusManagement: false,
  batchSize: 1,
  refreshTokens: false,
  dpop: 'optional',
  walletAttestation: 'optional',
}

const w3c: CredentialConfigInput = {
  id: 'degree',
  config: {
    format: 'jwt_vc_json',
    type: ['VerifiableCredential', 'UniversityDegreeCredential'],
    context: ['https://www.w3.org/ns/credentials/examples/v2'],
  },
  fields: [{ path: ['credentialSubject', 'degree', 'name'], type: 'string', mandatory: true }],
  keyChainId: 'signing',
  lifetimeSeconds: 86400,
  keyBinding: true,
  statusManagement: true,
  batchSize: 1,
  refreshTokens: false,
  dpop: 'optional',
  walletAttestation: 'optional',
}

describe('field editor values ⇄ configuration JSON', () => {
  it('OpenID4VCI 1.0 A.1.1: a jwt_vc_json configuration (type list, @context) comes back whole', () => {
    const values = configValues(w3c)
    expect(values.config.members.type).toStrictEqual(['VerifiableCredential', 'UniversityDegreeCredential'])
    const body = configBody(values)
    expect(body).toStrictEqual(w3c)
    expect(checkCredentialConfig(zCredentialConfigInput.parse(body))).toStrictEqual([])
  })

  it('the members of another format stay out of the body when the format is switched', () => {
    const values = configValues(w3c)
    values.config.format = 'dc+sd-jwt'
    values.config.members.vct = 'urn:x'
    expect(configBody(values).config).toStrictEqual({ format: 'dc+sd-jwt', vct: 'urn:x' })
    values.config.format = 'jwt_vc_json'
    values.config.members.context = []
    expect(configBody(values).config).toStrictEqual({
      format: 'jwt_vc_json',
      type: ['VerifiableCredential', 'UniversityDegreeCredential'],
    })
  })

  it('a row left disclosable stays out of a jwt_vc_json body (no selective disclosure)', () => {
    const values = configValues(w3c)
    values.fields = values.fields.map((row) => ({ ...row, disclosable: true }))
    expect(configBody(values).fields[0]?.disclosable).toBeUndefined()
  })

  it('an SD-JWT VC configuration comes back whole from its editor values', () => {
    expect(configBody(configValues(sdJwt))).toStrictEqual(sdJwt)
  })

  it('an mdoc configuration comes back whole, namespaces and typed defaults included', () => {
    const body = configBody(configValues(mdoc))
    expect(body).toStrictEqual(mdoc)
    expect(checkCredentialConfig(zCredentialConfigInput.parse(body))).toStrictEqual([])
  })

  it('FieldDisplayDto labels ({lang, label}) are edited as {name, locale}', () => {
    const values = configValues({
      ...mdoc,
      fields: mdoc.fields
        .slice(0, 1)
        .map((field) => ({ ...field, display: [{ lang: 'de', label: 'Name' }] })),
    })
    expect(values.fields[0]?.display).toStrictEqual([{ locale: 'de', name: 'Name' }])
    expect(configBody(values).fields[0]?.display).toStrictEqual([{ name: 'Name', locale: 'de' }])
  })

  it('a namespace stays out of an SD-JWT VC body, and vct out of an mdoc one', () => {
    const values = configValues(mdoc)
    values.config.format = 'dc+sd-jwt'
    values.config.members.vct = 'urn:x'
    const body = configBody(values)
    expect(body.fields.every((field) => field.namespace === undefined)).toBe(true)
    expect(body.config).toStrictEqual({ format: 'dc+sd-jwt', vct: 'urn:x' })
  })

  it('paths: dotted, and JSON when a segment holds a dot', () => {
    expect(pathText(['address', 'street'])).toBe('address.street')
    expect(pathText(['x.y', 'z'])).toBe('["x.y","z"]')
    expect(parsePath('address.street')).toStrictEqual(['address', 'street'])
    expect(parsePath('["x.y","z"]')).toStrictEqual(['x.y', 'z'])
    expect(parsePath('a..b')).toStrictEqual(['a', '', 'b'])
    expect(parsePath('  ')).toStrictEqual([])
  })

  it('a default that is not of its type is sent as typed, for the API to name', () => {
    const values = configValues(mdoc)
    values.fields = values.fields.map((row, i) => (i === 1 ? { ...row, defaultValue: 'yes' } : row))
    const body = zCredentialConfigInput.parse(configBody(values))
    expect(checkCredentialConfig(body)).toStrictEqual([
      { path: 'body.fields.1.defaultValue', message: "not a value of type 'boolean'" },
    ])
  })

  it('the input names cover every field row and label', () => {
    const names = configInputNames(configValues(sdJwt))
    expect(names).toContain('fields.3.defaultValue')
    expect(names).toContain('fields.0.display.0.locale')
    expect(names).toContain('config.display.0.name')
  })
})

describe('config-import files', () => {
  it('exports a stored configuration without its timestamps and reads it back', () => {
    const stored = { ...sdJwt, createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z' }
    const file = configFile(stored)
    expect(file.fileName).toBe('pid.json')
    expect(JSON.parse(file.text)).toStrictEqual(sdJwt)
    expect(readConfigFile(file.text, file.fileName)).toStrictEqual({ ok: true, config: sdJwt })
  })

  it('the id defaults to the file name, and must match it', () => {
    const { id: _id, ...withoutId } = mdoc
    const read = readConfigFile(JSON.stringify(withoutId), 'mdl.json')
    expect(read.ok && read.config.id).toBe('mdl')
    expect(readConfigFile(JSON.stringify(mdoc), 'other.json')).toStrictEqual({
      ok: false,
      issues: [{ path: 'id', message: "'mdl' differs from the file name 'other'" }],
    })
  })

  it('refuses version 1 members, placeholders, other JSON and invalid shapes', () => {
    expect(readConfigFile(JSON.stringify({ ...mdoc, claims: {} }), 'mdl.json')).toMatchObject({
      ok: false,
      issues: [{ path: 'claims' }],
    })
    expect(readConfigFile(JSON.stringify({ ...mdoc, keyChainId: '${KEY}' }), 'mdl.json').ok).toBe(false)
    expect(readConfigFile('[]', 'mdl.json').ok).toBe(false)
    expect(readConfigFile('{', 'mdl.json').ok).toBe(false)
    expect(readConfigFile(JSON.stringify({ ...mdoc, fields: [] }), 'mdl.json')).toMatchObject({
      ok: false,
      issues: [{ path: 'fields' }],
    })
  })
})
