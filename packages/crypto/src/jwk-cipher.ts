import { createHmac, timingSafeEqual } from 'node:crypto'
import type { JWK } from 'jose'
import { createJsonCipher, DecryptionError } from './json-cipher'
import { deriveKeyMaterial } from './master-secret'

/** A stored JWK that cannot be decrypted: a wrong MASTER_SECRET or a tampered row. */
export class JwkDecryptionError extends DecryptionError {
  constructor(context: string, options?: { cause?: unknown }) {
    super(`the key material of ${context}`, options)
    this.name = 'JwkDecryptionError'
  }
}

/**
 * Encrypts JWKs (and other secrets, such as webhook signing secrets) at rest with AES-256-GCM under a key derived from MASTER_SECRET (HKDF). The
 * additional data binds each ciphertext to its row, so a value copied into another tenant's key
 * chain does not decrypt. Format: `v1.<iv>.<ciphertext>.<tag>` (base64url).
 */
export function createJwkCipher(masterSecret: string) {
  const cipher = createJsonCipher(
    deriveKeyMaterial(masterSecret, 'jwk-encryption'),
    (context, cause) => new JwkDecryptionError(context, { cause }),
  )
  return {
    encrypt(value: JWK | Record<string, unknown> | string, context: string): string {
      return cipher.encrypt(value, context)
    },
    decrypt<T = JWK>(stored: string, context: string): T {
      return cipher.decrypt<T>(stored, context)
    },
  }
}
export type JwkCipher = ReturnType<typeof createJwkCipher>

const CHECK_LABEL = 'credential-service/master-secret-check/v1'

/**
 * A value stored once per database that proves which MASTER_SECRET it was set up with, so a
 * process started with another secret fails at once instead of minting garbage keys.
 */
export function masterSecretFingerprint(masterSecret: string): string {
  return createHmac('sha256', deriveKeyMaterial(masterSecret, 'jwk-encryption'))
    .update(CHECK_LABEL)
    .digest('base64url')
}

export function fingerprintsMatch(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}
