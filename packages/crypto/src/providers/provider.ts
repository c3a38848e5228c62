import type { JWK } from 'jose'
import type { SigningAlgorithm } from '../signer'

/** An external key store's failure: unknown key, unreachable, or an error answer. */
export class KeyProviderError extends Error {
  /**
   * `not_found`: no such key; `unavailable`: the provider could not be reached; `misconfigured`:
   * this service's settings for the provider are wrong (a PKCS#11 module or token missing, a PIN
   * refused); `refused`: any other error answer.
   */
  readonly reason: 'not_found' | 'unavailable' | 'misconfigured' | 'refused'

  constructor(message: string, options?: { cause?: unknown; reason?: KeyProviderError['reason'] }) {
    super(message, options)
    this.name = 'KeyProviderError'
    this.reason =
      options?.reason ?? (options?.cause instanceof KeyProviderError ? options.cause.reason : 'refused')
  }
}

export interface ProvidedKey {
  publicJwk: JWK
  alg: SigningAlgorithm
  /**
   * The id to store when the provider pins what it was asked for (Azure: `name` becomes
   * `name/version`); absent: the id as given.
   */
  externalKeyId?: string
}

/** Port of an external key store (Vault transit, AWS KMS, a PKCS#11 token): the private key never leaves it. */
export interface KeyProvider {
  /** Public key and algorithm of the key named `externalKeyId`. */
  describe(externalKeyId: string): Promise<ProvidedKey>
  /** Signs `data` with the key; returns the JOSE-form signature. */
  sign(externalKeyId: string, alg: SigningAlgorithm, data: Uint8Array): Promise<Uint8Array>
  /**
   * Makes a new non-extractable key named `externalKeyId` in the store. Absent: the store's keys
   * are made by its operator, and the service only registers them.
   */
  generate?(externalKeyId: string, alg: SigningAlgorithm): Promise<ProvidedKey>
  /**
   * Stores an existing private key (a private JWK) in the store as a new non-exportable key named
   * after `externalKeyId`. Absent: the store takes no key from outside (`source: import` keeps it
   * in the database).
   */
  importKey?(externalKeyId: string, privateJwk: JWK, alg: SigningAlgorithm): Promise<ProvidedKey>
  /** The id that follows the key's current version, for a rotation that names no new key. Absent: the id as stored. */
  unpinned?(externalKeyId: string): string
  /** Start-up check that the store is there and this service may use it (a PKCS#11 token and its login). */
  check?(): Promise<void>
  /** Releases what the provider holds open (a PKCS#11 token's sessions). */
  close?(): Promise<void>
}
