import type { JWK } from 'jose'
import type { SigningAlgorithm } from '../signer'

/** An external key store's failure: unknown key, unreachable, or an error answer. */
export class KeyProviderError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'KeyProviderError'
  }
}

/** Port of an external key store (Vault transit, AWS KMS): the private key never leaves it. */
export interface KeyProvider {
  /** Public key and algorithm of the key named `externalKeyId`. */
  describe(externalKeyId: string): Promise<{ publicJwk: JWK; alg: SigningAlgorithm }>
  /** Signs `data` with the key; returns the JOSE-form signature. */
  sign(externalKeyId: string, alg: SigningAlgorithm, data: Uint8Array): Promise<Uint8Array>
}
