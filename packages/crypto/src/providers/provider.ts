import type { JWK } from 'jose'
import type { SigningAlgorithm } from '../signer'

/** An external key store's failure: unknown key, unreachable, or an error answer. */
export class KeyProviderError extends Error {
  /** `not_found`: no such key; `unavailable`: the provider could not be reached; `refused`: any other error answer. */
  readonly reason: 'not_found' | 'unavailable' | 'refused'

  constructor(message: string, options?: { cause?: unknown; reason?: KeyProviderError['reason'] }) {
    super(message, options)
    this.name = 'KeyProviderError'
    this.reason =
      options?.reason ?? (options?.cause instanceof KeyProviderError ? options.cause.reason : 'refused')
  }
}

/** Port of an external key store (Vault transit, AWS KMS): the private key never leaves it. */
export interface KeyProvider {
  /** Public key and algorithm of the key named `externalKeyId`. */
  describe(externalKeyId: string): Promise<{ publicJwk: JWK; alg: SigningAlgorithm }>
  /** Signs `data` with the key; returns the JOSE-form signature. */
  sign(externalKeyId: string, alg: SigningAlgorithm, data: Uint8Array): Promise<Uint8Array>
}
