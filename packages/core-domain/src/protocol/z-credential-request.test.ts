import { describe, expect, it } from 'vitest'
import { refusalOf } from '../../test/refusal'
import { parseCredentialRequest, zCredentialRequest } from './z-credential-request'

const refusal = refusalOf(parseCredentialRequest)
const invalid = (detail: string) => ({ code: 'invalid_credential_request', detail })
const jwk = { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', alg: 'ECDH-ES' }

describe('the credential request (OpenID4VCI 1.0 §8.2, §8.3.1.2)', () => {
  it('§8.2: accepts the examples of the spec, by configuration id or by credential identifier', () => {
    const byConfiguration = {
      credential_configuration_id: 'UniversityDegreeCredential',
      proofs: { jwt: ['eyJraWQiOiJkaWQ6ZXhhbXBsZ…'] },
    }
    expect(parseCredentialRequest(byConfiguration)).toStrictEqual(byConfiguration)
    const byIdentifier = {
      credential_identifier: 'CivilEngineeringDegree-2023',
      proofs: { jwt: ['eyJraWQiOiJkaWQ6ZXhhbXBsZ…'] },
      credential_response_encryption: { jwk, enc: 'A128GCM', zip: 'DEF' },
      extension: 1,
    }
    expect(parseCredentialRequest(byIdentifier)).toStrictEqual(byIdentifier)
    expect(parseCredentialRequest({ credential_configuration_id: 'pid' })).toStrictEqual({
      credential_configuration_id: 'pid',
    })
  })

  it('S-28, §8.2: credential_identifier and credential_configuration_id are exclusive, one is required', () => {
    const notBoth = invalid('send credential_identifier or credential_configuration_id, not both')
    expect(refusal({ credential_identifier: 'a', credential_configuration_id: 'b' })).toStrictEqual(notBoth)
    expect(refusal({ credential_identifier: 1, credential_configuration_id: 2, proof: {} })).toStrictEqual(
      notBoth,
    )
    const required = invalid('credential_configuration_id or credential_identifier is required')
    expect(refusal({})).toStrictEqual(required)
    expect(refusal({ proof: {} })).toStrictEqual(required)
    expect(refusal({ credential_configuration_id: 5 })).toStrictEqual(required)
    expect(zCredentialRequest.safeParse(null).success).toBe(false)
    expect(refusal({ credential_identifier: ['a'] })).toStrictEqual(
      invalid('credential_identifier must be a string'),
    )
  })

  it('§8.2: proofs holds exactly one proof type, and the draft proof parameter is refused', () => {
    const base = { credential_configuration_id: 'pid' }
    expect(refusal({ ...base, proof: { proof_type: 'jwt', jwt: 'x' } })).toStrictEqual(
      invalid('use proofs (OpenID4VCI 1.0), not proof'),
    )
    for (const proofs of ['x', ['x'], null])
      expect(refusal({ ...base, proofs })).toStrictEqual(
        invalid('proofs must be an object keyed by the proof type'),
      )
    expect(refusal({ ...base, proofs: { jwt: ['a'], attestation: ['b'] } })).toStrictEqual(
      invalid('proofs must use exactly one proof type'),
    )
  })

  it('§8.3.1.2, I-71: a malformed credential_response_encryption is invalid_encryption_parameters, before other problems', () => {
    const parameters = (detail: string) => ({ code: 'invalid_encryption_parameters', detail })
    const needsJwk = parameters('credential_response_encryption needs a jwk object')
    expect(refusal({ credential_response_encryption: 'x' })).toStrictEqual(needsJwk)
    expect(
      refusal({ credential_configuration_id: 'pid', credential_response_encryption: { enc: 'A128GCM' } }),
    ).toStrictEqual(needsJwk)
    expect(
      refusal({
        credential_configuration_id: 'pid',
        credential_response_encryption: { jwk: { kty: 'EC' }, enc: 'A128GCM' },
      }),
    ).toStrictEqual(parameters('the response encryption jwk needs an alg'))
    expect(
      refusal({ credential_configuration_id: 'pid', credential_response_encryption: { jwk } }),
    ).toStrictEqual(parameters('credential_response_encryption needs an enc'))
  })
})
