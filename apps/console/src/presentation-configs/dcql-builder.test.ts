import { describe, expect, it } from 'vitest'
import {
  buildDcql,
  type CredentialPick,
  checkDcqlText,
  claimOptions,
  type PickableConfig,
  picksOf,
  queryIdFor,
} from './dcql-builder'
import { presentationBody, presentationValues, splitPems } from './presentation-values'

const pid: PickableConfig = {
  id: 'pid',
  config: { format: 'dc+sd-jwt', vct: 'urn:eudi:pid:1' },
  fields: [
    { path: ['given_name'], type: 'string' },
    { path: ['address', 'locality'], type: 'string' },
  ],
  keyBinding: true,
}
const mdl: PickableConfig = {
  id: 'org.iso.mdl',
  config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
  fields: [
    { path: ['family_name'], type: 'string', namespace: 'org.iso.18013.5.1' },
    { path: ['age_over_18'], type: 'boolean', namespace: 'org.iso.18013.5.1' },
  ],
  keyBinding: false,
}
const configs = [pid, mdl]
const key = (...path: string[]) => JSON.stringify(path)

describe('DCQL built from picked claims', () => {
  it('OpenID4VP §7.2: mdoc claims are [namespace, element]; SD-JWT VC claims are their field paths', () => {
    expect(claimOptions(mdl).map((option) => option.path)).toStrictEqual([
      ['org.iso.18013.5.1', 'family_name'],
      ['org.iso.18013.5.1', 'age_over_18'],
    ])
    expect(claimOptions(pid).map((option) => option.label)).toStrictEqual(['given_name', 'address.locality'])
  })

  it('OpenID4VP §6: vct_values for SD-JWT VC, doctype_value for mdoc, holder binding off without key binding', () => {
    const picks: CredentialPick[] = [
      { queryId: 'pid', configId: 'pid', claims: [key('address', 'locality')], retain: [], multiple: false },
      {
        queryId: 'mdl',
        configId: 'org.iso.mdl',
        claims: [key('org.iso.18013.5.1', 'age_over_18')],
        retain: [key('org.iso.18013.5.1', 'age_over_18')],
        multiple: true,
      },
    ]
    const query = buildDcql(picks, configs)
    expect(query).toStrictEqual({
      credentials: [
        {
          id: 'pid',
          format: 'dc+sd-jwt',
          meta: { vct_values: ['urn:eudi:pid:1'] },
          claims: [{ path: ['address', 'locality'] }],
        },
        {
          id: 'mdl',
          format: 'mso_mdoc',
          multiple: true,
          meta: { doctype_value: 'org.iso.18013.5.1.mDL' },
          require_cryptographic_holder_binding: false,
          claims: [{ path: ['org.iso.18013.5.1', 'age_over_18'], intent_to_retain: true }],
        },
      ],
    })
    expect(checkDcqlText(JSON.stringify(query))).toStrictEqual({ ok: true, query })
    expect(picksOf(query, configs)).toStrictEqual(picks)
  })

  it('a query the builder cannot show whole stays raw', () => {
    const withValues = {
      credentials: [
        {
          id: 'pid',
          format: 'dc+sd-jwt' as const,
          meta: { vct_values: ['urn:eudi:pid:1'] },
          claims: [{ path: ['given_name'], values: ['Erika'] }],
        },
      ],
    }
    expect(picksOf(withValues, configs)).toBeUndefined()
    const unknownVct = {
      credentials: [{ id: 'x', format: 'dc+sd-jwt' as const, meta: { vct_values: ['urn:other'] } }],
    }
    expect(picksOf(unknownVct, configs)).toBeUndefined()
  })

  it('query ids: DCQL characters only, unique', () => {
    expect(queryIdFor('org.iso.mdl', [])).toBe('org_iso_mdl')
    expect(queryIdFor('pid', ['pid', 'pid_2'])).toBe('pid_3')
  })
})

describe('DCQL checked as typed', () => {
  it('names bad JSON, shape issues and OpenID4VP §6–7 rule issues by path', () => {
    expect(checkDcqlText('{')).toMatchObject({ ok: false, issues: [{ path: '' }] })
    expect(checkDcqlText('{"credentials":[]}')).toMatchObject({
      ok: false,
      issues: [{ path: 'credentials' }],
    })
    const mdocWithVct = {
      credentials: [
        { id: 'a', format: 'mso_mdoc', meta: { vct_values: ['x'] }, claims: [{ path: ['only'] }] },
      ],
    }
    expect(checkDcqlText(JSON.stringify(mdocWithVct))).toStrictEqual({
      ok: false,
      issues: [
        { path: 'credentials.0.meta', message: 'mso_mdoc queries need meta.doctype_value' },
        {
          path: 'credentials.0.claims.0.path',
          message: 'mso_mdoc claim paths are exactly [namespace, element identifier]',
        },
      ],
    })
  })
})

describe('presentation configuration values ⇄ JSON', () => {
  it('a configuration comes back whole (issue 25: trust lists, no trustAnchors); PEMs are split', () => {
    const pem = (n: number) => `-----BEGIN CERTIFICATE-----\nMII${n}\n-----END CERTIFICATE-----`
    const config = {
      id: 'age',
      dcqlQuery: buildDcql(
        [{ queryId: 'pid', configId: 'pid', claims: [], retain: [], multiple: false }],
        configs,
      ),
      lifetimeSeconds: 300,
      responseMode: 'direct_post' as const,
      keyChainId: 'verifier',
      clientIdPrefix: 'x509_hash' as const,
      trustListIds: ['roots'],
      acceptAnyIssuer: false,
    }
    expect(presentationBody(presentationValues(config))).toStrictEqual(config)
    expect(splitPems(`${pem(1)}\n\n${pem(2)}\n`)).toStrictEqual([pem(1), pem(2)])
    expect(splitPems('not a pem')).toStrictEqual(['not a pem'])
    expect(presentationBody({ ...presentationValues(config), dcqlQuery: '{' }).dcqlQuery).toBeUndefined()
  })
})
