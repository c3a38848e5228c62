import { type PresentationConfigInput, zPresentationConfigInput } from '@credential-service/core-domain'
import { ManagementApiError } from '@credential-service/sdk'
import { describe, expect, it } from 'vitest'
import { problemErrors, validateWith } from '../src/forms/problems'
import {
  dcApiOriginsError,
  defaultDcApiProtocols,
  presentationBody,
  presentationFields,
  presentationValues,
} from '../src/presentation-configs/presentation-values'

const mdl = {
  id: 'mdl',
  format: 'mso_mdoc' as const,
  meta: { doctype_value: 'org.iso.18013.5.1.mDL' },
  claims: [{ path: ['org.iso.18013.5.1', 'age_over_18'] }],
}
const config: PresentationConfigInput = {
  id: 'age',
  dcqlQuery: { credentials: [mdl] },
  lifetimeSeconds: 300,
  responseMode: 'direct_post.jwt',
  keyChainId: 'verifier',
  clientIdPrefix: 'x509_san_dns',
  acceptAnyIssuer: false,
}

/** A 422 of the management API with these `errors[]`. */
const refusal = (errors: { path: string; message: string }[]) =>
  new ManagementApiError('validation', {
    method: 'PUT',
    url: '/api/presentations/age',
    status: 422,
    problem: {
      type: 'about:blank',
      title: 'Invalid input',
      status: 422,
      code: 'invalid_input',
      detail: 'The configuration is invalid',
      errors,
    },
  })

describe('presentation configuration values ⇄ JSON: the Digital Credentials API settings', () => {
  it('a configuration without dcApi comes back without it; nothing entered sends nothing', () => {
    const values = presentationValues(config)
    expect(values.dcApi).toStrictEqual({ origins: [], protocols: [], readerAuth: false })
    expect(presentationBody(values)).toStrictEqual(config)
    expect(presentationBody(values)).not.toHaveProperty('dcApi')
    expect(presentationBody(presentationValues())).not.toHaveProperty('dcApi')
  })

  it('dcApi comes back unchanged: origins and protocols in their order', () => {
    const withDcApi: PresentationConfigInput = {
      ...config,
      dcApi: {
        protocols: ['org-iso-mdoc', 'openid4vp-v1-unsigned'],
        origins: ['https://shop.example', 'http://localhost:8080'],
      },
    }
    expect(presentationBody(presentationValues(withDcApi))).toStrictEqual(withDcApi)
    const onlyOrigins = { ...config, dcApi: { origins: ['https://shop.example'] } }
    expect(presentationBody(presentationValues(onlyOrigins))).toStrictEqual(onlyOrigins)
    const onlyProtocols = { ...config, dcApi: { protocols: ['openid4vp-v1-signed' as const] } }
    expect(presentationBody(presentationValues(onlyProtocols))).toStrictEqual(onlyProtocols)
    // Issue 37: Annex C reader authentication survives an edit, alone or with the lists.
    const readerAuth = { ...config, dcApi: { protocols: ['org-iso-mdoc' as const], readerAuth: true } }
    expect(presentationBody(presentationValues(readerAuth))).toStrictEqual(readerAuth)
    const onlyReaderAuth = { ...config, dcApi: { readerAuth: true } }
    expect(presentationBody(presentationValues(onlyReaderAuth))).toStrictEqual(onlyReaderAuth)
    // The values are copies: editing them leaves the loaded configuration as it was.
    presentationValues(withDcApi).dcApi.origins.push('https://other.example')
    expect(withDcApi.dcApi?.origins).toHaveLength(2)
  })

  it('emptied lists send no dcApi; origins are trimmed; no protocol = the default order', () => {
    const values = presentationValues({ ...config, dcApi: { origins: ['https://shop.example'] } })
    expect(
      presentationBody({ ...values, dcApi: { origins: [], protocols: [], readerAuth: false } }),
    ).not.toHaveProperty('dcApi')
    expect(
      presentationBody({
        ...values,
        dcApi: { origins: [' https://shop.example '], protocols: [], readerAuth: false },
      }).dcApi,
    ).toStrictEqual({ origins: ['https://shop.example'] })
    expect(defaultDcApiProtocols(values)).toStrictEqual([
      'openid4vp-v1-signed',
      'openid4vp-v1-unsigned',
      'org-iso-mdoc',
    ])
    expect(defaultDcApiProtocols({ ...values, clientIdPrefix: 'redirect_uri' })).toStrictEqual([
      'openid4vp-v1-unsigned',
      'org-iso-mdoc',
    ])
    expect(defaultDcApiProtocols({ ...values, dcqlQuery: '{' })).toBeUndefined()
  })

  it('problems of dcApi land on its inputs, an origin named by its entry', () => {
    const values = presentationValues({
      ...config,
      dcApi: { origins: ['https://shop.example', 'http://shop.example'], protocols: ['org-iso-mdoc'] },
    })
    const errors = problemErrors(
      refusal([
        { path: 'body.dcApi.origins.1', message: 'must use https' },
        { path: 'body.dcApi.protocols.0', message: 'org-iso-mdoc: does not fit' },
      ]),
      presentationFields(values),
    )
    expect(errors).toStrictEqual({
      'dcApi.origins.1': 'must use https',
      'dcApi.protocols': 'org-iso-mdoc: does not fit',
    })
    expect(dcApiOriginsError(errors, values.dcApi.origins)).toBe('http://shop.example: must use https')
    // The schema's own problems, before anything is sent.
    const browser = validateWith(
      zPresentationConfigInput,
      presentationBody({
        ...values,
        dcApi: { origins: ['https://shop.example/path'], protocols: [], readerAuth: false },
      }),
      presentationFields(values),
    )
    expect(dcApiOriginsError(browser, ['https://shop.example/path'])).toMatch(
      /^https:\/\/shop\.example\/path: must be a web origin/,
    )
    expect(dcApiOriginsError({ 'dcApi.origins': 'too many' }, [])).toBe('too many')
    expect(dcApiOriginsError({}, values.dcApi.origins)).toBeUndefined()
  })
})

describe('presentation configuration values ⇄ JSON: trust lists and trusted_authorities', () => {
  it('a configuration without them comes back without them; nothing chosen sends nothing', () => {
    const values = presentationValues(config)
    expect(values.trustListIds).toStrictEqual([])
    expect(values.trustedAuthorities).toBe(false)
    const body = presentationBody(values)
    expect(body).toStrictEqual(config)
    expect(body).not.toHaveProperty('trustListIds')
    expect(body).not.toHaveProperty('trustedAuthorities')
    expect(presentationBody(presentationValues())).not.toHaveProperty('trustListIds')
    expect(presentationBody(presentationValues())).not.toHaveProperty('trustedAuthorities')
  })

  it('trustListIds (in their order) and trustedAuthorities come back unchanged', () => {
    const withLists: PresentationConfigInput = {
      ...config,
      trustListIds: ['eu-pid', 'acme-roots'],
      trustedAuthorities: 'from-anchors',
    }
    const values = presentationValues(withLists)
    expect(values.trustListIds).toStrictEqual(['eu-pid', 'acme-roots'])
    expect(values.trustedAuthorities).toBe(true)
    expect(presentationBody(values)).toStrictEqual(withLists)
    expect(presentationBody(presentationValues({ ...config, trustListIds: ['eu-pid'] }))).toStrictEqual({
      ...config,
      trustListIds: ['eu-pid'],
    })
    expect(
      presentationBody(presentationValues({ ...config, trustedAuthorities: 'from-anchors' })),
    ).toStrictEqual({ ...config, trustedAuthorities: 'from-anchors' })
    // The values are copies: editing them leaves the loaded configuration as it was.
    values.trustListIds.push('other')
    expect(withLists.trustListIds).toHaveLength(2)
  })

  it('emptied or unchecked, they are sent as nothing', () => {
    const values = presentationValues({
      ...config,
      trustListIds: ['eu-pid'],
      trustedAuthorities: 'from-anchors',
    })
    const body = presentationBody({ ...values, trustListIds: [], trustedAuthorities: false })
    expect(body).toStrictEqual(config)
  })

  it('problems land on their inputs: a trust list named by its entry lands on the list', () => {
    const values = presentationValues({ ...config, trustListIds: ['eu-pid', 'gone'] })
    const errors = problemErrors(
      refusal([
        { path: 'body.trustListIds.1', message: 'unknown trust list gone' },
        { path: 'body.trustedAuthorities', message: 'not with acceptAnyIssuer' },
      ]),
      presentationFields(values),
    )
    expect(errors).toStrictEqual({
      trustListIds: 'unknown trust list gone',
      trustedAuthorities: 'not with acceptAnyIssuer',
    })
    // The schema's own problems, before anything is sent.
    const browser = validateWith(
      zPresentationConfigInput,
      presentationBody({ ...values, trustListIds: ['not an id!'] }),
      presentationFields(values),
    )
    expect(Object.keys(browser)).toStrictEqual(['trustListIds'])
  })
})
