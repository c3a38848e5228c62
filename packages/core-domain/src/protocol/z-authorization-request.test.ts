import { describe, expect, it } from 'vitest'
import { refusalOf } from '../../test/refusal'
import { parseAuthorizationRequest, REQUEST_URI_PREFIX } from './z-authorization-request'

const refusal = refusalOf(parseAuthorizationRequest)

describe('the authorization request (RFC 9126 §4, HAIP: pushed requests only)', () => {
  it('RFC 9126 §4: accepts client_id and the pushed request_uri; other parameters pass through', () => {
    const request = {
      client_id: 's6BhdRkqt3',
      request_uri: `${REQUEST_URI_PREFIX}6esc_11ACC5bwc014ltc14eY22c`,
      extension: 'x',
    }
    expect(parseAuthorizationRequest(request)).toStrictEqual(request)
  })

  it('I-33: a request without client_id, or without a pushed request_uri, is invalid_request', () => {
    const mustBePushed = {
      code: 'invalid_request',
      detail: 'authorization requests must be pushed (PAR): send client_id and request_uri',
    }
    const requestUri = `${REQUEST_URI_PREFIX}x`
    for (const query of [
      {},
      { request_uri: requestUri },
      { client_id: '', request_uri: requestUri },
      { client_id: 'w', request_uri: 'https://wallet.example/request' },
      { client_id: 'w', response_type: 'code', redirect_uri: 'https://wallet.example/cb' },
    ])
      expect(refusal(query)).toStrictEqual(mustBePushed)
  })
})
