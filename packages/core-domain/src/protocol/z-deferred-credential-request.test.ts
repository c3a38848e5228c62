import { describe, expect, it } from 'vitest'
import { refusalOf } from '../../test/refusal'
import { parseDeferredCredentialRequest } from './z-deferred-credential-request'

const refusal = refusalOf(parseDeferredCredentialRequest)

describe('the deferred credential request (OpenID4VCI 1.0 §9.1, §9.3)', () => {
  it('§9.1: accepts the example of the spec, with its own response encryption key', () => {
    const request = { transaction_id: '8xLOxBtZp8' }
    expect(parseDeferredCredentialRequest(request)).toStrictEqual(request)
    const encrypted = {
      ...request,
      credential_response_encryption: { jwk: { kty: 'EC', alg: 'ECDH-ES' }, enc: 'A256GCM' },
    }
    expect(parseDeferredCredentialRequest(encrypted)).toStrictEqual(encrypted)
  })

  it('§9.3: a missing or empty transaction_id is invalid_credential_request; a malformed key invalid_encryption_parameters first', () => {
    const required = { code: 'invalid_credential_request', detail: 'transaction_id is required' }
    for (const body of [{}, { transaction_id: '' }, { transaction_id: 7 }])
      expect(refusal(body)).toStrictEqual(required)
    expect(refusal({ credential_response_encryption: { enc: 'A128GCM' } })).toStrictEqual({
      code: 'invalid_encryption_parameters',
      detail: 'credential_response_encryption needs a jwk object',
    })
  })
})
