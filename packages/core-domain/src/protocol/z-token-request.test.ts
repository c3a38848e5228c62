import { describe, expect, it } from 'vitest'
import { refusalOf } from '../../test/refusal'
import { parseAccessTokenRequest } from './z-token-request'

const PRE_AUTHORIZED = 'urn:ietf:params:oauth:grant-type:pre-authorized_code'

const refusal = refusalOf(parseAccessTokenRequest)

describe('parseAccessTokenRequest', () => {
  it('RFC 6749 §5.2: an absent or unknown grant_type is unsupported_grant_type', () => {
    const unsupported = { code: 'unsupported_grant_type', detail: 'this grant type is not supported' }
    expect(refusal({})).toStrictEqual(unsupported)
    expect(refusal({ grant_type: 'client_credentials' })).toStrictEqual(unsupported)
    expect(refusal({ grant_type: [PRE_AUTHORIZED, PRE_AUTHORIZED] })).toStrictEqual(unsupported)
  })

  it('RFC 6749 §5.2: a missing or empty required parameter is invalid_request naming it', () => {
    expect(refusal({ grant_type: PRE_AUTHORIZED })).toStrictEqual({
      code: 'invalid_request',
      detail: 'pre-authorized_code is required',
    })
    expect(refusal({ grant_type: 'authorization_code', code: '' })).toStrictEqual({
      code: 'invalid_request',
      detail: 'code is required',
    })
    expect(refusal({ grant_type: 'refresh_token', refresh_token: ['a', 'b'] })).toStrictEqual({
      code: 'invalid_request',
      detail: 'refresh_token is required',
    })
  })

  it('reads an optional parameter that is not one string as absent, and keeps extensions', () => {
    expect(
      parseAccessTokenRequest({
        grant_type: PRE_AUTHORIZED,
        'pre-authorized_code': 'c',
        tx_code: ['1', '2'],
        x: 'y',
      }),
    ).toStrictEqual({ grant_type: PRE_AUTHORIZED, 'pre-authorized_code': 'c', tx_code: undefined, x: 'y' })
  })
})
