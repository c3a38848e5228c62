import { compactVerify, importJWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createJwkCipher } from '../src/jwk-cipher'
import { createSignerFactory, jwkContext } from '../src/key-chain-signer'
import { createAwsKmsProvider } from '../src/providers/aws-kms'
import { KeyProviderError } from '../src/providers/provider'
import { createVaultProvider } from '../src/providers/vault'
import { signJws } from '../src/signer'
import { startFakeKms } from '../src/testing/fake-kms'
import { startFakeVault } from '../src/testing/fake-vault'

const cipher = createJwkCipher('provider-test-master-secret-0123456789')

async function verifyJws(jws: string, jwk: object, alg: string) {
  const { payload, protectedHeader } = await compactVerify(jws, await importJWK(jwk, alg))
  return { payload: JSON.parse(new TextDecoder().decode(payload)), protectedHeader }
}

describe('Vault transit provider', () => {
  let vault: Awaited<ReturnType<typeof startFakeVault>>
  beforeAll(async () => {
    vault = await startFakeVault('vault-test-token')
  })
  afterAll(() => vault.close())

  for (const alg of ['ES256', 'ES384'] as const) {
    it(`${alg}: signs through /v1/transit/sign and verifies with the published JWK`, async () => {
      const held = await vault.addKey(`issuer-${alg}`, alg)
      const provider = createVaultProvider({ address: vault.address, token: 'vault-test-token' })
      const described = await provider.describe(`issuer-${alg}`)
      expect(described).toStrictEqual({ alg, publicJwk: held.publicJwk })

      const signerFor = createSignerFactory({ cipher, providers: { vault: provider } })
      const signer = signerFor(
        {
          tenantId: 't1',
          keyChainId: 'kc1',
          kmsProvider: 'vault',
          externalKeyId: `issuer-${alg}`,
          alg,
          kid: 'kid-1',
          encryptedJwk: cipher.encrypt(described.publicJwk, jwkContext('t1', 'kc1')),
          x5c: [],
        },
        described.publicJwk,
      )
      const jws = await signJws(signer, { typ: 'JWT', kid: signer.kid }, { hello: 'vault' })
      const verified = await verifyJws(jws, described.publicJwk, alg)
      expect(verified.payload).toStrictEqual({ hello: 'vault' })
      expect(verified.protectedHeader).toStrictEqual({ typ: 'JWT', kid: 'kid-1', alg })
      const signCall = vault.requests.findLast((r) => r.url === `/v1/transit/sign/issuer-${alg}`)
      expect(signCall?.body).toMatchObject({ prehashed: true, marshaling_algorithm: 'jws' })
    })
  }

  it('a wrong key name is a KeyProviderError naming the key', async () => {
    const provider = createVaultProvider({ address: vault.address, token: 'vault-test-token' })
    await expect(provider.describe('no-such-key')).rejects.toThrow(KeyProviderError)
    await expect(provider.describe('no-such-key')).rejects.toThrow(/'no-such-key'/)
  })

  it('a wrong token is refused by Vault and reported', async () => {
    await vault.addKey('k-token')
    const provider = createVaultProvider({ address: vault.address, token: 'wrong' })
    await expect(provider.describe('k-token')).rejects.toThrow(/permission denied/)
  })

  it('an unreachable Vault is reported as such, naming the key chain when signing', async () => {
    const provider = createVaultProvider({ address: 'http://127.0.0.1:1', token: 't' })
    await expect(provider.describe('any')).rejects.toThrow(/Vault is unreachable at http:\/\/127.0.0.1:1/)
    const signerFor = createSignerFactory({ cipher, providers: { vault: provider } })
    const signer = signerFor(
      {
        tenantId: 't',
        keyChainId: 'issuer-keys',
        kmsProvider: 'vault',
        externalKeyId: 'any',
        alg: 'ES256',
        kid: 'k',
        encryptedJwk: '',
        x5c: [],
      },
      { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' },
    )
    await expect(signer.sign(new Uint8Array([1]))).rejects.toThrow(/key chain 'issuer-keys' \(vault\)/)
  })
})

describe('AWS KMS provider', () => {
  let kms: Awaited<ReturnType<typeof startFakeKms>>
  const options = () => ({
    region: 'eu-central-1',
    endpoint: kms.endpoint,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
  })
  beforeAll(async () => {
    kms = await startFakeKms()
  })
  afterAll(() => kms.close())

  for (const alg of ['ES256', 'ES384'] as const) {
    it(`${alg}: Sign with MessageType DIGEST; the DER signature becomes JOSE r‖s`, async () => {
      const keyId = `arn:aws:kms:eu-central-1:111122223333:key/${crypto.randomUUID()}`
      const held = await kms.addKey(keyId, alg)
      const provider = createAwsKmsProvider(options())
      expect(await provider.describe(keyId)).toStrictEqual({ alg, publicJwk: held.publicJwk })
      const signerFor = createSignerFactory({ cipher, providers: { 'aws-kms': provider } })
      const signer = signerFor(
        {
          tenantId: 't',
          keyChainId: 'kc',
          kmsProvider: 'aws-kms',
          externalKeyId: keyId,
          alg,
          kid: 'k',
          encryptedJwk: '',
          x5c: [],
        },
        held.publicJwk,
      )
      const jws = await signJws(signer, { kid: 'k' }, { hello: 'kms' })
      expect((await verifyJws(jws, held.publicJwk, alg)).payload).toStrictEqual({ hello: 'kms' })
      expect(kms.calls).toContain('TrentService.Sign')
    })
  }

  it('an unknown key id is a KeyProviderError with the AWS error name', async () => {
    const provider = createAwsKmsProvider(options())
    await expect(provider.describe('alias/missing')).rejects.toThrow(
      /AWS KMS key 'alias\/missing': NotFoundException/,
    )
  })
})
