import {
  parseCredentialRequest,
  zAccessTokenRequest,
  zAuthorizationResponse,
  zNonceResponse,
} from '@credential-service/core-domain'
import { describe, expect, it } from 'vitest'
import type { protocol } from '../src/index'

// Typed with the SDK's types (the package typecheck fails if a field's type disagrees), then parsed
// by the service's own schemas: the two say the same about the same messages.
const credentialRequest: protocol.CredentialRequest = {
  credential_configuration_id: 'pid',
  proofs: { jwt: ['eyJhbGciOiJFUzI1NiJ9.e30.c2ln'] },
}
const tokenRequest: protocol.AccessTokenRequest = {
  grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
  'pre-authorized_code': 'code',
  tx_code: '1234',
}
const nonceResponse: protocol.NonceResponse = { c_nonce: 'n-0S6_WzA2Mj' }
const authorizationResponse: protocol.AuthorizationResponse = {
  vp_token: { pid: ['eyJhbGciOiJFUzI1NiJ9.e30.c2ln~'] },
  state: 'state',
}

describe('issue 21: the SDK types the wallet-facing messages from the service schemas', () => {
  it('OpenID4VCI 1.0 §8.2, §6.1, §7.2 and OpenID4VP 1.0 §8.1: typed examples are what the service accepts', () => {
    expect(parseCredentialRequest(credentialRequest)).toMatchObject({ credential_configuration_id: 'pid' })
    expect(zAccessTokenRequest.safeParse(tokenRequest).success).toBe(true)
    expect(zNonceResponse.safeParse(nonceResponse).success).toBe(true)
    expect(zAuthorizationResponse.safeParse(authorizationResponse).success).toBe(true)
  })

  it('the types refuse what the schemas refuse', () => {
    // @ts-expect-error grant_type is one of the three grants
    const wrongGrant: protocol.AccessTokenRequest = { grant_type: 'password', 'pre-authorized_code': 'x' }
    expect(zAccessTokenRequest.safeParse(wrongGrant).success).toBe(false)
    // @ts-expect-error c_nonce is a string
    const wrongNonce: protocol.NonceResponse = { c_nonce: 7 }
    expect(zNonceResponse.safeParse(wrongNonce).success).toBe(false)
  })
})
