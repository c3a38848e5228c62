import {
  type CredentialConfigInput,
  zAuthorizationServerMetadata,
  zCredentialConfigInput,
  zCredentialIssuerMetadata,
} from '@credential-service/core-domain'
import { describe, expect, it } from 'vitest'
import { advertisedBatchSize, authorizationServerMetadata, issuerMetadata } from './metadata'

const at = '2026-01-01T00:00:00.000Z'
const config = (id: string, extra: Partial<CredentialConfigInput> = {}) => ({
  ...zCredentialConfigInput.parse({
    id,
    config: { format: 'dc+sd-jwt', vct: `urn:example:${id}` },
    keyChainId: 'keys',
    fields: [{ path: ['given_name'], type: 'string' }],
    ...extra,
  }),
  keyChainId: 'keys',
  createdAt: at,
  updatedAt: at,
})

const fullMetadataOf = (...configs: ReturnType<typeof config>[]) =>
  issuerMetadata({
    issuer: 'https://issuer.example/issuers/acme',
    tenantName: 'ACME',
    configs: configs.map((c) => ({ config: c, signingAlg: 'ES256' })),
    encryption: {
      key: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid: 'enc', use: 'enc', alg: 'ECDH-ES' },
      required: false,
    },
  })
const metadataOf = (...configs: ReturnType<typeof config>[]) =>
  fullMetadataOf(...configs).batch_credential_issuance

describe('OpenID4VCI 1.0 §12.2.4 batch_credential_issuance (checklist I-12, I-63)', () => {
  it('§12.2.4: batch_size is the smallest batchSize of the key-bound configurations, which every one of them accepts', () => {
    expect(metadataOf(config('a', { batchSize: 3 }), config('b', { batchSize: 5 }))).toStrictEqual({
      batch_size: 3,
    })
    expect(advertisedBatchSize([{ keyBinding: true, batchSize: 4 }])).toBe(4)
  })

  it('I-12: no batch_credential_issuance when some key-bound configuration takes one proof', () => {
    expect(metadataOf(config('a', { batchSize: 1 }), config('b', { batchSize: 3 }))).toBeUndefined()
    expect(metadataOf(config('a'))).toBeUndefined()
    expect(metadataOf()).toBeUndefined()
  })

  it('§8.2: configurations without key binding take no proofs, so their batchSize does not count', () => {
    expect(
      metadataOf(config('a', { keyBinding: false, batchSize: 1 }), config('b', { batchSize: 2 })),
    ).toStrictEqual({ batch_size: 2 })
    expect(advertisedBatchSize([{ keyBinding: false, batchSize: 5 }])).toBeUndefined()
  })
})

describe('the metadata documents against their schemas (core-domain/protocol)', () => {
  it('I-14, §12.2.4: the issuer metadata and the authorization server metadata we build parse as themselves', () => {
    const metadata = fullMetadataOf(
      config('pid', { batchSize: 3, keyAttestation: { required: true, keyStorage: ['iso_18045_high'] } }),
      config('mdl', { config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' } }),
    )
    expect(zCredentialIssuerMetadata.parse(metadata)).toStrictEqual(metadata)
    const server = authorizationServerMetadata('https://issuer.example/issuers/acme', [
      { walletAttestation: 'optional' },
    ])
    expect(zAuthorizationServerMetadata.parse(server)).toStrictEqual(server)
  })
})
