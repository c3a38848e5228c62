import { describe, expect, it } from 'vitest'
import { refusalOf } from '../../test/refusal'
import { parseParRequest, walletRedirectUriProblem } from './z-par-request'

const refusal = refusalOf(parseParRequest)
const invalid = (detail: string) => ({ code: 'invalid_request', detail })
// RFC 9126 §2.1's example, with PKCE S256 as HAIP requires.
const base = {
  response_type: 'code',
  client_id: 's6BhdRkqt3',
  redirect_uri: 'https://client.example.org/cb',
  code_challenge: 'K2-ltc83acc4h0c9w6ESC_rEMTJ3bww-uCHaoeK1t8U',
  code_challenge_method: 'S256',
}

describe('the pushed authorization request (RFC 9126 §2.1, OpenID4VCI 1.0 §5.1)', () => {
  it('RFC 8252 §7.1, §7.3 (I-36): https, private-use schemes and loopback http are accepted; others are not', () => {
    for (const ok of ['https://wallet.example/cb', 'eu.example.wallet:/cb', 'http://127.0.0.1:4000/cb'])
      expect(walletRedirectUriProblem(ok), ok).toBeUndefined()
    for (const bad of [
      'http://wallet.example/cb',
      'javascript:alert(1)',
      'data:text/html,x',
      'https://w.example/cb#x',
      'https://user:pass@w.example/cb',
      'cb',
    ])
      expect(walletRedirectUriProblem(bad), bad).toBeTypeOf('string')
  })

  it('OpenID4VCI §5.1.1-5.1.2: accepts scope and authorization_details (a JSON array of openid_credential entries); empty parameters read as absent', () => {
    const details = [
      { type: 'openid_credential', credential_configuration_id: 'UniversityDegreeCredential', claims: [] },
    ]
    expect(
      parseParRequest({
        ...base,
        scope: 'UniversityDegreeCredential',
        state: '',
        issuer_state: 'eyJhbGciOiJSU0Et...FYUaBy',
        authorization_details: JSON.stringify(details),
      }),
    ).toStrictEqual({
      ...base,
      scope: 'UniversityDegreeCredential',
      state: undefined,
      issuer_state: 'eyJhbGciOiJSU0Et...FYUaBy',
      authorization_details: details,
    })
  })

  it('RFC 9126 §2.1 (I-31): a repeated parameter, a pushed request_uri or a request object is invalid_request', () => {
    expect(refusal({ ...base, scope: ['a', 'b'] })).toStrictEqual(invalid('scope must not be repeated'))
    expect(refusal({ extension: ['a', 'b'] })).toStrictEqual(invalid('extension must not be repeated'))
    expect(refusal({ ...base, request_uri: 'urn:x' })).toStrictEqual(
      invalid('request_uri must not be pushed (RFC 9126 §2.1)'),
    )
    expect(refusal({ ...base, request: 'eyJ' })).toStrictEqual(
      invalid('request objects are not supported; push the parameters'),
    )
  })

  it('RFC 6749 §4.1.2.1 (I-37): response_type other than code is unsupported_response_type; a missing one invalid_request', () => {
    expect(refusal({ ...base, response_type: 'code id_token' })).toStrictEqual({
      code: 'unsupported_response_type',
      detail: 'only response_type=code is supported',
    })
    expect(refusal({ ...base, response_type: '' })).toStrictEqual(invalid('response_type is required'))
  })

  it('RFC 7636 §4.3, §4.4.1 (I-34, I-36): client_id, redirect_uri and an S256 code_challenge are required', () => {
    expect(refusal({ ...base, client_id: undefined })).toStrictEqual(invalid('client_id is required'))
    expect(refusal({ ...base, redirect_uri: undefined })).toStrictEqual(invalid('redirect_uri is required'))
    expect(refusal({ ...base, redirect_uri: 'javascript:alert(1)' })).toStrictEqual(
      invalid('redirect_uri must use https, a private-use scheme, or http to a loopback address'),
    )
    expect(refusal({ ...base, code_challenge: undefined })).toStrictEqual(
      invalid('code_challenge is required (PKCE, RFC 7636)'),
    )
    expect(refusal({ ...base, code_challenge_method: 'plain' })).toStrictEqual(
      invalid('code_challenge_method must be S256'),
    )
    expect(refusal({ ...base, code_challenge: 'short' })).toStrictEqual(
      invalid('code_challenge is not an S256 challenge'),
    )
  })

  it('RFC 9396 §2, S-123: malformed authorization_details is invalid_request', () => {
    const details = (value: string) => refusal({ ...base, authorization_details: value })
    expect(details('{')).toStrictEqual(invalid('authorization_details must be a JSON array'))
    for (const value of ['null', '[]', '{}'])
      expect(details(value)).toStrictEqual(invalid('authorization_details must be a non-empty JSON array'))
    expect(details('[{"type":"other"}]')).toStrictEqual(
      invalid('authorization_details entries must have type openid_credential'),
    )
    expect(details('[1]')).toStrictEqual(
      invalid('authorization_details entries must have type openid_credential'),
    )
    expect(details('[{"type":"openid_credential","credential_configuration_id":5}]')).toStrictEqual(
      invalid('authorization_details names an unknown credential_configuration_id'),
    )
    expect(details(`[${'['.repeat(100)}${']'.repeat(100)}]`)).toStrictEqual(
      invalid('authorization_details nests deeper than 64 levels'),
    )
  })
})
