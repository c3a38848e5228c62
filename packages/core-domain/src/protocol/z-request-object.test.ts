import { describe, expect, it } from 'vitest'
import { zRequestObject } from './z-request-object'

// OpenID4VP 1.0 §5 and Appendix B examples, as a HAIP verifier signs them.
const requestObject = {
  aud: 'https://self-issued.me/v2',
  iat: 1_700_000_000,
  exp: 1_700_000_300,
  client_id: 'x509_san_dns:client.example.org',
  response_type: 'vp_token',
  response_mode: 'direct_post.jwt',
  response_uri: 'https://client.example.org/post',
  nonce: 'n-0S6_WzA2Mj',
  state: 'eyJhb...6-sVA',
  dcql_query: {
    credentials: [
      {
        id: 'my_credential',
        format: 'dc+sd-jwt',
        meta: { vct_values: ['https://credentials.example.com/identity_credential'] },
        claims: [{ path: ['last_name'] }, { path: ['first_name'] }],
      },
    ],
  },
  client_metadata: {
    jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid: 'ac', use: 'enc', alg: 'ECDH-ES' }] },
    vp_formats_supported: { 'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['ES256'] } },
    encrypted_response_enc_values_supported: ['A128GCM'],
  },
  verifier_info: [{ format: 'registration_cert', data: 'eyJ...' }],
  wallet_nonce: 'qPmxiNFCR3QTm19POc8u',
}

describe('the request object (OpenID4VP 1.0 §5)', () => {
  it('§5.1: the claims a verifier signs parse as they are', () => {
    expect(zRequestObject.parse(requestObject)).toStrictEqual(requestObject)
  })

  it('§5.1, §8.2: response_type is vp_token and the response goes by direct_post or direct_post.jwt', () => {
    expect(zRequestObject.safeParse({ ...requestObject, response_type: 'code' }).success).toBe(false)
    expect(zRequestObject.safeParse({ ...requestObject, response_mode: 'fragment' }).success).toBe(false)
    const { nonce: _, ...withoutNonce } = requestObject
    expect(zRequestObject.safeParse(withoutNonce).success).toBe(false)
  })
})
