import { describe, expect, it } from 'vitest'
import { zIssuerMetadataConfig } from '../src/contract/credential-config'
import { formatMemberIssues } from '../src/formats/config-rules'
import {
  CREDENTIAL_FORMATS,
  type CredentialFormat,
  credentialTypeOf,
  formatSpecs,
} from '../src/formats/registry'
import { checkDcqlQuery } from '../src/rules/dcql'

/** A value of each format's type member, and the credential type it names. */
const sampleTypes: { [F in CredentialFormat]: { value: unknown; type: string } } = {
  'dc+sd-jwt': { value: 'urn:example:type', type: 'urn:example:type' },
  mso_mdoc: { value: 'urn:example:type', type: 'urn:example:type' },
  jwt_vc_json: {
    value: ['VerifiableCredential', 'urn:example:type'],
    type: 'VerifiableCredential urn:example:type',
  },
}

describe('issue 38: the credential format registry', () => {
  it('has one spec per format of the enum, each under its own identifier', () => {
    expect(Object.keys(formatSpecs)).toStrictEqual([...CREDENTIAL_FORMATS])
    for (const format of CREDENTIAL_FORMATS) expect(formatSpecs[format].format).toBe(format)
  })

  it.each(CREDENTIAL_FORMATS)(
    'spec §2.2: a %s config is its own member of the union, typed by its type member',
    (format) => {
      const { typeMember } = formatSpecs[format]
      const config = zIssuerMetadataConfig.parse({ format, [typeMember]: sampleTypes[format].value })
      expect(credentialTypeOf(config)).toBe(sampleTypes[format].type)
      expect(zIssuerMetadataConfig.safeParse({ format }).success).toBe(false)
      const others = CREDENTIAL_FORMATS.filter((other) => other !== format)
      for (const other of others) {
        const foreign = {
          format,
          [typeMember]: sampleTypes[format].value,
          [formatSpecs[other].typeMember]: sampleTypes[other].value,
        }
        expect(zIssuerMetadataConfig.safeParse(foreign).success).toBe(false)
        expect(formatMemberIssues({ config: foreign })).toStrictEqual([
          {
            path: `body.config.${formatSpecs[other].typeMember}`,
            message: `${formatSpecs[other].typeMember} applies to ${other} only`,
          },
        ])
      }
    },
  )

  it('leaves an unknown format and a body without config to the parser', () => {
    expect(formatMemberIssues({ config: { format: 'ldp_vc' } })).toStrictEqual([])
    expect(formatMemberIssues({ config: 'mso_mdoc' })).toStrictEqual([])
    expect(formatMemberIssues(null)).toStrictEqual([])
    expect(zIssuerMetadataConfig.safeParse({ format: 'ldp_vc', vct: 'x' }).success).toBe(false)
  })

  it('OpenID4VP 1.0 B.2.4, V-10: intent_to_retain only where the format has it, meta only of its own format', () => {
    const query = (format: string, meta: Record<string, unknown>) => ({
      credentials: [{ id: 'q', format, meta, claims: [{ path: ['a', 'b'], intent_to_retain: true }] }],
    })
    type Query = Parameters<typeof checkDcqlQuery>[0]
    expect(checkDcqlQuery(query('mso_mdoc', { doctype_value: 'x' }) as Query)).toStrictEqual([])
    expect(checkDcqlQuery(query('dc+sd-jwt', { vct_values: ['x'] }) as Query)).toStrictEqual([
      { path: 'body.dcqlQuery.credentials.0.claims.0.intent_to_retain', message: 'applies to mso_mdoc only' },
    ])
    expect(checkDcqlQuery(query('dc+sd-jwt', { doctype_value: 'x' }) as Query)).toStrictEqual([
      { path: 'body.dcqlQuery.credentials.0.meta', message: 'dc+sd-jwt queries need meta.vct_values' },
      { path: 'body.dcqlQuery.credentials.0.claims.0.intent_to_retain', message: 'applies to mso_mdoc only' },
    ])
  })
})
