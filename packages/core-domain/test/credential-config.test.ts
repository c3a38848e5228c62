import { describe, expect, it } from 'vitest'
import { zCredentialConfigInput } from '../src/contract/credential-config'
import { formatMemberIssues } from '../src/formats/config-rules'
import { deriveClaimsJsonSchema, resolveClaims } from '../src/rules/claims-schema'
import { checkCredentialConfig } from '../src/rules/credential-config'
import { findRemovedCredentialFields } from '../src/rules/removed-fields'

const sdJwt = zCredentialConfigInput.parse({
  id: 'pid',
  config: { format: 'dc+sd-jwt', vct: 'urn:eudi:pid:1', display: [{ name: 'PID', locale: 'en-US' }] },
  keyChainId: 'pid-keys',
  fields: [
    {
      path: ['given_name'],
      type: 'string',
      mandatory: true,
      disclosable: true,
      display: [
        { name: 'Given name', locale: 'en' },
        { lang: 'de', label: 'Vorname' },
      ],
    },
    { path: ['birthdate'], type: 'date', disclosable: true },
    { path: ['address', 'street_address'], type: 'string', defaultValue: 'Main St 1', disclosable: true },
    { path: ['age_over_18'], type: 'boolean', defaultValue: true },
  ],
})

const mdoc = zCredentialConfigInput.parse({
  id: 'mdl',
  config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
  keyChainId: 'mdl-keys',
  fields: [
    { path: ['family_name'], type: 'string', namespace: 'org.iso.18013.5.1', mandatory: true },
    { path: ['age_over_18'], type: 'boolean', namespace: 'org.iso.18013.5.1.aamva', defaultValue: true },
  ],
})

describe('removed 4.x/3.x shapes (spec §2.1–2.4, §9.2)', () => {
  it('names every removed field with its 5.0 replacement', () => {
    const v1 = {
      id: 'old',
      claims: {},
      disclosureFrame: {},
      schema: {},
      claimsWebhook: {},
      notificationWebhook: {},
      keyId: 'k',
      certId: 'c',
      config: { format: 'mso_mdoc', namespace: 'ns', claimsByNamespace: {}, claimsMetadata: {} },
    }
    const issues = findRemovedCredentialFields(v1)
    expect(issues.map((i) => i.path)).toStrictEqual([
      'body.claims',
      'body.disclosureFrame',
      'body.schema',
      'body.claimsWebhook',
      'body.notificationWebhook',
      'body.keyId',
      'body.certId',
      'body.config.namespace',
      'body.config.claimsByNamespace',
      'body.config.claimsMetadata',
    ])
    expect(issues.find((i) => i.path === 'body.claimsWebhook')?.message).toContain('attributeProviderId')
    expect(issues.find((i) => i.path === 'body.notificationWebhook')?.message).toContain('webhookEndpointId')
    expect(issues.find((i) => i.path === 'body.keyId')?.message).toContain('keyChainId')
    expect(issues.find((i) => i.path === 'body.claims')?.message).toContain('fields[].defaultValue')
    expect(findRemovedCredentialFields(sdJwt)).toStrictEqual([])
  })
})

describe('credential configuration rules', () => {
  it('accepts valid SD-JWT and mdoc configurations', () => {
    expect(checkCredentialConfig(sdJwt)).toStrictEqual([])
    expect(checkCredentialConfig(mdoc)).toStrictEqual([])
  })

  it('spec §2.3: mdoc fields need a namespace; SD-JWT fields must not have one', () => {
    const mdocWithout = { ...mdoc, fields: [{ path: ['x'], type: 'string' as const }] }
    expect(checkCredentialConfig(mdocWithout)).toStrictEqual([
      { path: 'body.fields.0.namespace', message: 'mso_mdoc fields need a namespace' },
    ])
    const sdWith = { ...sdJwt, fields: [{ path: ['x'], type: 'string' as const, namespace: 'ns' }] }
    expect(checkCredentialConfig(sdWith)).toStrictEqual([
      { path: 'body.fields.0.namespace', message: 'namespace applies to mso_mdoc fields only' },
    ])
  })

  it('spec §2.2: docType for mdoc, vct for SD-JWT', () => {
    // Checked on the body as sent: `config` is a union on `format` (issue 38), so a parsed one has them.
    const paths = (c: unknown) => formatMemberIssues(c).map((i) => i.path)
    expect(paths({ ...mdoc, config: { format: 'mso_mdoc' } })).toStrictEqual(['body.config.docType'])
    expect(paths({ ...sdJwt, config: { format: 'dc+sd-jwt', docType: 'x' } })).toStrictEqual([
      'body.config.vct',
      'body.config.docType',
    ])
  })

  it('OID4VCI §12.2.4 (I-10): one display per locale; a claim is a leaf or a parent; defaults of the declared type', () => {
    const broken = {
      ...sdJwt,
      config: {
        ...sdJwt.config,
        display: [
          { name: 'A', locale: 'en' },
          { name: 'B', locale: 'EN' },
        ],
      },
      fields: [
        { path: ['address'], type: 'object' as const },
        { path: ['address', 'street'], type: 'string' as const },
        { path: ['age'], type: 'integer' as const, defaultValue: '18' },
        { path: ['age'], type: 'integer' as const },
      ],
    }
    expect(checkCredentialConfig(broken).map((i) => i.path)).toStrictEqual([
      'body.config.display.1.locale',
      'body.fields.2.defaultValue',
      'body.fields.3.path',
      'body.fields.0.path',
    ])
  })
})

describe('claims schema derived from fields (spec §2.1)', () => {
  it('issues defaults overlaid with supplied claims, nested by path', () => {
    const result = resolveClaims(sdJwt, { given_name: 'Erika', birthdate: '1964-08-12' })
    expect(result).toStrictEqual({
      ok: true,
      claims: {
        given_name: 'Erika',
        birthdate: '1964-08-12',
        address: { street_address: 'Main St 1' },
        age_over_18: true,
      },
    })
  })

  it('refuses a missing mandatory claim, a wrong type and an undeclared claim, naming each', () => {
    const result = resolveClaims(sdJwt, { birthdate: '12.08.1964', nickname: 'E' }, 'offer.claims')
    expect(result.ok).toBe(false)
    expect(!result.ok && result.issues.map((i) => i.path).sort()).toStrictEqual([
      'offer.claims.birthdate',
      'offer.claims.given_name',
      'offer.claims.nickname',
    ])
  })

  it('groups mdoc claims by namespace', () => {
    expect(resolveClaims(mdoc, { 'org.iso.18013.5.1': { family_name: 'Mustermann' } })).toStrictEqual({
      ok: true,
      claims: {
        'org.iso.18013.5.1': { family_name: 'Mustermann' },
        'org.iso.18013.5.1.aamva': { age_over_18: true },
      },
    })
    expect(resolveClaims(mdoc, {}).ok).toBe(false)
  })

  it('is also available as a JSON Schema', () => {
    const schema = deriveClaimsJsonSchema(sdJwt)
    expect(schema).toMatchObject({
      type: 'object',
      required: ['given_name'],
      additionalProperties: false,
      properties: {
        birthdate: { type: 'string', format: 'date' },
        address: { type: 'object', properties: { street_address: { type: 'string' } } },
      },
    })
  })
})

describe('F-03 / SD-JWT VC §3.2.2.2: registered claims are never selectively disclosable', () => {
  it('a disclosable iss, nbf, exp, cnf, vct, vct#integrity or status (or a claim under one) is refused, naming the field', () => {
    const names = ['iss', 'nbf', 'exp', 'cnf', 'vct', 'vct#integrity', 'status']
    const withFields = (fields: { path: string[] }[]) => ({
      ...sdJwt,
      fields: [...sdJwt.fields, ...fields.map((f) => ({ ...f, type: 'string' as const, disclosable: true }))],
    })
    const base = sdJwt.fields.length
    expect(checkCredentialConfig(withFields(names.map((name) => ({ path: [name] }))))).toStrictEqual(
      names.map((name, i) => ({
        path: `body.fields.${base + i}.disclosable`,
        message: `'${name}' must not be selectively disclosable (SD-JWT VC §3.2.2.2)`,
      })),
    )
    expect(checkCredentialConfig(withFields([{ path: ['cnf', 'kid'] }]))).toStrictEqual([
      {
        path: `body.fields.${base}.disclosable`,
        message: "'cnf' must not be selectively disclosable (SD-JWT VC §3.2.2.2)",
      },
    ])
  })

  it('sub may be disclosable; nbf may be a plain field', () => {
    const config = {
      ...sdJwt,
      fields: [
        { path: ['sub'], type: 'string' as const, disclosable: true },
        { path: ['nbf'], type: 'integer' as const },
      ],
    }
    expect(checkCredentialConfig(config)).toStrictEqual([])
  })

  it('a field over a claim the issuer sets (iss, iat, exp, cnf, vct, vct#integrity, status), disclosable or not, is refused: it would be replaced at issuance', () => {
    const names = ['iss', 'iat', 'exp', 'cnf', 'vct', 'vct#integrity', 'status']
    const config = {
      ...sdJwt,
      fields: [...sdJwt.fields, ...names.map((name) => ({ path: [name, 'x'], type: 'string' as const }))],
    }
    const base = sdJwt.fields.length
    expect(checkCredentialConfig(config)).toStrictEqual(
      names.map((name, i) => ({
        path: `body.fields.${base + i}.path`,
        message: `'${name}' is set by the issuer in every credential; it cannot be a field`,
      })),
    )
    expect(
      checkCredentialConfig({
        ...sdJwt,
        fields: [...sdJwt.fields, { path: ['iat'], type: 'integer' as const, disclosable: true }],
      }),
    ).toStrictEqual([
      {
        path: `body.fields.${base}.path`,
        message: "'iat' is set by the issuer in every credential; it cannot be a field",
      },
    ])
  })
})
