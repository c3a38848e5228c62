import { describe, expect, it } from 'vitest'
import { zIssuerMetadataConfig } from '../src/contract/credential-config'
import { vcTypeKey, vcTypesMatch } from '../src/formats/jwt-vc-json/types'
import { formatSpecs } from '../src/formats/registry'
import { checkCredentialConfig } from '../src/rules/credential-config'
import { checkDcqlQuery } from '../src/rules/dcql'

const spec = formatSpecs.jwt_vc_json
const config = zIssuerMetadataConfig.parse({
  format: 'jwt_vc_json',
  type: ['VerifiableCredential', 'ConformanceCredential'],
})

describe('issue 38 step 2: the jwt_vc_json format spec', () => {
  it('OpenID4VCI 1.0 A.1.1: "credential_definition: REQUIRED … type: REQUIRED. Array designating the types"', () => {
    expect(spec.typeMetadata(config as never)).toStrictEqual({
      credential_definition: { type: ['VerifiableCredential', 'ConformanceCredential'] },
    })
    expect(spec.signingAlgValues('ES256')).toStrictEqual(['ES256'])
    expect(spec.bindingMethod).toBe('jwk')
  })

  it('VCDM 2.0 §4.5: "one value of the type property MUST be VerifiableCredential"', () => {
    const parsed = zIssuerMetadataConfig.safeParse({ format: 'jwt_vc_json', type: ['ConformanceCredential'] })
    expect(parsed.success).toBe(false)
    expect(zIssuerMetadataConfig.safeParse({ format: 'jwt_vc_json', type: [] }).success).toBe(false)
  })

  it('has no selective disclosure, no transaction data and no Annex C', () => {
    expect({ sd: spec.intentToRetain, td: spec.transactionData, annexC: spec.annexC }).toStrictEqual({
      sd: false,
      td: false,
      annexC: false,
    })
  })

  it('fields are claims under credentialSubject, never disclosable', () => {
    const body = (fields: unknown[]) =>
      ({ id: 'c', keyChainId: 'k', config, fields }) as Parameters<typeof checkCredentialConfig>[0]
    expect(
      checkCredentialConfig(body([{ path: ['credentialSubject', 'given_name'], type: 'string' }])),
    ).toStrictEqual([])
    expect(checkCredentialConfig(body([{ path: ['given_name'], type: 'string' }]))).toStrictEqual([
      {
        path: 'body.fields.0.path',
        message: "jwt_vc_json claims are under 'credentialSubject': ['credentialSubject', ...]",
      },
    ])
    expect(
      checkCredentialConfig(body([{ path: ['credentialSubject', 'a'], type: 'string', disclosable: true }])),
    ).toStrictEqual([
      { path: 'body.fields.0.disclosable', message: 'jwt_vc_json credentials have no selective disclosure' },
    ])
  })

  it('OpenID4VP 1.0 B.1.1: "type_values: REQUIRED. A non-empty array of string arrays"', () => {
    type Query = Parameters<typeof checkDcqlQuery>[0]
    const query = (meta: Record<string, unknown>) =>
      ({ credentials: [{ id: 'q', format: 'jwt_vc_json', meta }] }) as Query
    expect(checkDcqlQuery(query({ type_values: [['ConformanceCredential']] }))).toStrictEqual([])
    expect(checkDcqlQuery(query({ vct_values: ['x'] }))).toStrictEqual([
      { path: 'body.dcqlQuery.credentials.0.meta', message: 'jwt_vc_json queries need meta.type_values' },
    ])
  })

  it('OpenID4VP 1.0 B.1.1: each inner array "MUST be present … regardless of order or the presence of additional types"', () => {
    const presented = ['VerifiableCredential', 'ConformanceCredential']
    expect(vcTypesMatch([['ConformanceCredential']], presented)).toBe(true)
    expect(vcTypesMatch([['ConformanceCredential', 'VerifiableCredential']], presented)).toBe(true)
    expect(vcTypesMatch([['Other'], ['ConformanceCredential', 'Extra']], presented)).toBe(false)
    expect(vcTypesMatch([['Other'], ['VerifiableCredential']], presented)).toBe(true)
  })

  it('names a configuration type and a query alternative alike, and builds a query from it', () => {
    expect(spec.typeOf(config as never)).toBe('ConformanceCredential VerifiableCredential')
    const meta = spec.dcqlMeta([spec.typeOf(config as never)])
    expect(meta).toStrictEqual({ type_values: [['ConformanceCredential', 'VerifiableCredential']] })
    expect(spec.queriedTypes(meta)).toStrictEqual([
      vcTypeKey(config.format === 'jwt_vc_json' ? config.type : []),
    ])
  })
})
