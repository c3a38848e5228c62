import { describe, expect, it } from 'vitest'
import { zCredentialIssuerMetadata } from './z-credential-issuer-metadata'

// OpenID4VCI 1.0 §12.2.4's example, shortened to one configuration of each format.
const example = {
  credential_issuer: 'https://credential-issuer.example.com',
  authorization_servers: ['https://server.example.com'],
  credential_endpoint: 'https://credential-issuer.example.com',
  nonce_endpoint: 'https://credential-issuer.example.com/nonce',
  batch_credential_issuance: { batch_size: 10 },
  display: [{ name: 'Example University', locale: 'en-US', logo: { uri: 'https://u.example/logo.png' } }],
  credential_configurations_supported: {
    SD_JWT_VC_example_in_OpenID4VCI: {
      format: 'dc+sd-jwt',
      scope: 'SD_JWT_VC_example_in_OpenID4VCI',
      cryptographic_binding_methods_supported: ['jwk'],
      credential_signing_alg_values_supported: ['ES256'],
      proof_types_supported: {
        jwt: {
          proof_signing_alg_values_supported: ['ES256'],
          key_attestations_required: { key_storage: ['iso_18045_moderate'] },
        },
      },
      vct: 'SD_JWT_VC_example_in_OpenID4VCI',
      credential_metadata: {
        display: [{ name: 'IdentityCredential', locale: 'en-US', background_color: '#12107c' }],
        claims: [{ path: ['given_name'], display: [{ name: 'Given Name', locale: 'en-US' }] }],
      },
    },
    'org.iso.18013.5.1.mDL': {
      format: 'mso_mdoc',
      doctype: 'org.iso.18013.5.1.mDL',
      cryptographic_binding_methods_supported: ['cose_key'],
      credential_signing_alg_values_supported: [-7, -9],
      credential_metadata: { claims: [{ path: ['org.iso.18013.5.1', 'given_name'], mandatory: true }] },
    },
  },
}

describe('credential issuer metadata (OpenID4VCI 1.0 §12.2.4)', () => {
  it('§12.2.4: the spec example parses as it is, extensions included', () => {
    expect(zCredentialIssuerMetadata.parse(example)).toStrictEqual(example)
  })

  it('§12.2.4: credential_issuer, credential_endpoint and credential_configurations_supported are required', () => {
    for (const member of [
      'credential_issuer',
      'credential_endpoint',
      'credential_configurations_supported',
    ]) {
      const { [member]: _, ...without } = example as Record<string, unknown>
      expect(zCredentialIssuerMetadata.safeParse(without).success, member).toBe(false)
    }
    expect(
      zCredentialIssuerMetadata.safeParse({ ...example, batch_credential_issuance: { batch_size: 1 } })
        .success,
    ).toBe(false)
  })
})
