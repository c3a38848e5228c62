import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

const VERSION = 'v1'

/** A value stored encrypted that cannot be decrypted: a wrong MASTER_SECRET, a tampered or moved row. */
export class DecryptionError extends Error {
  constructor(what: string, options?: { cause?: unknown }) {
    super(`cannot decrypt ${what}: wrong MASTER_SECRET or tampered data`, options)
    this.name = 'DecryptionError'
  }
}

/**
 * AES-256-GCM over the JSON of a value, with a random 96-bit IV per value. `context` is the
 * additional authenticated data: it binds the ciphertext to its row, so a value copied elsewhere
 * does not decrypt. Format: `v1.<iv>.<ciphertext>.<tag>` (base64url).
 */
export function createJsonCipher(key: Buffer, failure: (context: string, cause?: unknown) => Error) {
  return {
    encrypt(value: unknown, context: string): string {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      cipher.setAAD(Buffer.from(context, 'utf8'))
      const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()])
      return [VERSION, iv, ciphertext, cipher.getAuthTag()]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.')
    },

    decrypt<T>(stored: string, context: string): T {
      const [version, iv, ciphertext, tag] = stored.split('.')
      if (version !== VERSION || !iv || !ciphertext || !tag) throw failure(context)
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
        decipher.setAAD(Buffer.from(context, 'utf8'))
        decipher.setAuthTag(Buffer.from(tag, 'base64url'))
        const plain = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()])
        return JSON.parse(plain.toString('utf8')) as T
      } catch (cause) {
        throw failure(context, cause)
      }
    },
  }
}
