import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { JWK } from 'jose'
import { deriveKeyMaterial } from './master-secret'

const VERSION = 'v1'

/** A stored JWK that cannot be decrypted: a wrong MASTER_SECRET or a tampered row. */
export class JwkDecryptionError extends Error {
  constructor(context: string, options?: { cause?: unknown }) {
    super(`cannot decrypt the key material of ${context}: wrong MASTER_SECRET or tampered data`, options)
    this.name = 'JwkDecryptionError'
  }
}

/**
 * Encrypts JWKs (and other secrets, such as webhook signing secrets) at rest with AES-256-GCM under a key derived from MASTER_SECRET (HKDF). The
 * additional data binds each ciphertext to its row, so a value copied into another tenant's key
 * chain does not decrypt. Format: `v1.<iv>.<ciphertext>.<tag>` (base64url).
 */
export function createJwkCipher(masterSecret: string) {
  const key = deriveKeyMaterial(masterSecret, 'jwk-encryption')
  return {
    encrypt(value: JWK | Record<string, unknown> | string, context: string): string {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      cipher.setAAD(Buffer.from(context, 'utf8'))
      const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()])
      return [VERSION, iv, ciphertext, cipher.getAuthTag()]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.')
    },

    decrypt<T = JWK>(stored: string, context: string): T {
      const [version, iv, ciphertext, tag] = stored.split('.')
      if (version !== VERSION || !iv || !ciphertext || !tag) throw new JwkDecryptionError(context)
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
        decipher.setAAD(Buffer.from(context, 'utf8'))
        decipher.setAuthTag(Buffer.from(tag, 'base64url'))
        const plain = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()])
        return JSON.parse(plain.toString('utf8')) as T
      } catch (cause) {
        throw new JwkDecryptionError(context, { cause })
      }
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
