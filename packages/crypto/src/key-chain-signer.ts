import { createPrivateKey, type JsonWebKey, type KeyObject, sign as nodeSign } from 'node:crypto'
import type { JWK } from 'jose'
import type { JwkCipher } from './jwk-cipher'
import { publicPart } from './keys'
import type { KeyProvider } from './providers/provider'
import { KeyProviderError } from './providers/provider'
import { hashFor, type Signer, type SigningAlgorithm } from './signer'

export type KmsProvider = 'db' | 'vault' | 'aws-kms' | 'pkcs11' | 'azure-key-vault' | 'gcp-kms'

/** What a signer needs of a key chain's active key, as stored (spec §2.4). */
export interface ActiveKeyMaterial {
  tenantId: string
  keyChainId: string
  kmsProvider: KmsProvider
  externalKeyId: string | null
  alg: SigningAlgorithm
  kid: string
  /** Encrypted JWK: private for `db`, public for external providers. */
  encryptedJwk: string
  /** Base64 DER certificates, leaf first. */
  x5c: string[]
}

/** Additional data that binds an encrypted JWK to its key chain row. */
export function jwkContext(tenantId: string, keyChainId: string): string {
  return `key-chain:${tenantId}/${keyChainId}`
}

export interface SignerFactoryOptions {
  cipher: JwkCipher
  providers: Partial<Record<Exclude<KmsProvider, 'db'>, KeyProvider>>
  /** Imported private keys kept per kid (never the plaintext JWK). */
  cacheSize?: number
}

/** Signs raw data with a local private key, JOSE-form signature. */
export function signWithKeyObject(key: KeyObject, alg: SigningAlgorithm, data: Uint8Array): Uint8Array {
  return new Uint8Array(nodeSign(hashFor(alg), data, { key, dsaEncoding: 'ieee-p1363' }))
}

/**
 * Builds Signers for key chains. `db` keys are decrypted once and cached as a non-extractable
 * KeyObject keyed by kid (rotation makes a new kid); external keys sign in their provider.
 * Failures name the key chain and never contain key material.
 */
export function createSignerFactory(options: SignerFactoryOptions) {
  const cacheSize = options.cacheSize ?? 1000
  const keyObjects = new Map<string, KeyObject>()

  function privateKeyFor(material: ActiveKeyMaterial): KeyObject {
    const cacheKey = `${material.tenantId}/${material.keyChainId}/${material.kid}`
    const cached = keyObjects.get(cacheKey)
    if (cached) return cached
    const jwk = options.cipher.decrypt(
      material.encryptedJwk,
      jwkContext(material.tenantId, material.keyChainId),
    )
    const key = createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' })
    if (keyObjects.size >= cacheSize) keyObjects.delete(keyObjects.keys().next().value as string)
    keyObjects.set(cacheKey, key)
    return key
  }

  return function signerFor(material: ActiveKeyMaterial, publicJwk: JWK): Signer {
    const base = {
      alg: material.alg,
      kid: material.kid,
      publicJwk: { ...publicPart(publicJwk), kid: material.kid },
      x5c: material.x5c,
    }
    if (material.kmsProvider === 'db') {
      return { ...base, sign: async (data) => signWithKeyObject(privateKeyFor(material), material.alg, data) }
    }
    const provider = options.providers[material.kmsProvider]
    const name = `key chain '${material.keyChainId}' (${material.kmsProvider})`
    return {
      ...base,
      async sign(data) {
        if (!provider)
          throw new KeyProviderError(`${name}: the ${material.kmsProvider} provider is not configured`)
        if (!material.externalKeyId) throw new KeyProviderError(`${name}: no externalKeyId`)
        try {
          return await provider.sign(material.externalKeyId, material.alg, data)
        } catch (cause) {
          throw new KeyProviderError(`${name}: ${(cause as Error).message}`, { cause })
        }
      },
    }
  }
}
export type SignerFactory = ReturnType<typeof createSignerFactory>
