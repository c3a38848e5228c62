import { describe, expect, it } from 'vitest'
import { zDcqlQuery } from '../src/contract/dcql'
import { checkDcqlQuery } from '../src/rules/dcql'
import { checkOutboundUrl } from '../src/rules/outbound-url'

const valid = {
  credentials: [
    {
      id: 'pid',
      format: 'dc+sd-jwt',
      meta: { vct_values: ['urn:eudi:pid:1'] },
      claims: [
        { id: 'given', path: ['given_name'] },
        { id: 'street', path: ['address', 'street_address'] },
        { id: 'nat', path: ['nationalities', null] },
      ],
      claim_sets: [['given', 'street'], ['given']],
    },
    {
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: 'org.iso.18013.5.1.mDL' },
      claims: [{ path: ['org.iso.18013.5.1', 'age_over_18'], values: [true], intent_to_retain: false }],
    },
  ],
  credential_sets: [{ options: [['pid'], ['mdl']], required: true }],
}

describe('DCQL (OpenID4VP 1.0 §6, checklist V-10)', () => {
  it('accepts a well-formed query with claim_sets and credential_sets', () => {
    expect(checkDcqlQuery(zDcqlQuery.parse(valid))).toStrictEqual([])
  })

  it('V-10: refuses broken cross references and format rules, naming each path', () => {
    const broken = zDcqlQuery.parse({
      credentials: [
        { id: 'a', format: 'mso_mdoc', meta: { vct_values: ['x'] }, claims: [{ path: ['only-element'] }] },
        {
          id: 'a',
          format: 'dc+sd-jwt',
          meta: { vct_values: ['x'] },
          claims: [{ id: 'c1', path: ['x'] }, { path: ['x'] }],
          claim_sets: [['c1', 'c9']],
        },
      ],
      credential_sets: [{ options: [['a'], ['missing']] }],
    })
    expect(checkDcqlQuery(broken).map((i) => i.path)).toStrictEqual([
      'body.dcqlQuery.credentials.0.meta',
      'body.dcqlQuery.credentials.0.claims.0.path',
      'body.dcqlQuery.credentials.1.id',
      'body.dcqlQuery.credentials.1.claims.1.path',
      'body.dcqlQuery.credentials.1.claims.1.id',
      'body.dcqlQuery.credentials.1.claim_sets.0.1',
      'body.dcqlQuery.credential_sets.0.options.1.0',
    ])
  })

  it('S-122: more than 50 credential queries, bad ids and empty paths fail the shape', () => {
    const many = {
      credentials: Array.from({ length: 51 }, (_, i) => ({ ...valid.credentials[0], id: `c${i}` })),
    }
    expect(zDcqlQuery.safeParse(many).success).toBe(false)
    expect(
      zDcqlQuery.safeParse({ credentials: [{ ...valid.credentials[0], id: 'has space' }] }).success,
    ).toBe(false)
    expect(
      zDcqlQuery.safeParse({ credentials: [{ ...valid.credentials[1], claims: [{ path: [] }] }] }).success,
    ).toBe(false)
    expect(zDcqlQuery.safeParse({ credentials: [] }).success).toBe(false)
  })
})

describe('outbound URLs of attribute providers and webhooks', () => {
  const strict = { allowHttp: false, allowedHosts: [] }
  it('accepts public https URLs', () => {
    expect(checkOutboundUrl('https://attributes.example.com/pid', strict)).toStrictEqual([])
  })

  it('refuses http, credentials in the URL, and private, loopback, link-local or internal hosts', () => {
    for (const url of [
      'http://attributes.example.com',
      'https://user:pw@example.com',
      'https://127.0.0.1/x',
      'https://10.1.2.3',
      'https://172.20.0.1',
      'https://192.168.1.1',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/',
      'https://[fd00::1]/',
      'https://localhost:8443',
      'https://db.internal',
    ]) {
      expect(checkOutboundUrl(url, strict), url).not.toStrictEqual([])
    }
  })

  it('an allow-list and the http switch open them for development', () => {
    expect(
      checkOutboundUrl('http://localhost:4000/hook', { allowHttp: true, allowedHosts: ['localhost'] }),
    ).toStrictEqual([])
  })
})
