import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import bcrypt from 'bcryptjs'

const BCRYPT_COST = 10

/** bcrypt at rest (spec §2.5, §5 rule 5). */
export function hashSecret(secret: string): Promise<string> {
  return bcrypt.hash(secret, BCRYPT_COST)
}

/** SHA-256 of a single-use code (pre-authorized code, transaction code) as stored: base64url. */
export function codeHash(value: string): string {
  return createHash('sha256').update(value).digest('base64url')
}

/** High-entropy client secret: 32 random bytes, base64url. */
export function generateSecret(): string {
  return randomBytes(32).toString('base64url')
}

/**
 * Checks secrets against bcrypt hashes, paying bcrypt (~80 ms of CPU) only on the first success
 * per hash. A success is remembered as an HMAC of the secret under a per-process random key,
 * indexed by the stored hash: rotating a secret changes the hash, so the old entry is never hit.
 * Failures are never cached, so a wrong secret always costs a full bcrypt compare.
 */
export function createSecretVerifier(options: { maxEntries?: number } = {}) {
  const maxEntries = options.maxEntries ?? 10_000
  const cacheKey = randomBytes(32)
  const verified = new Map<string, Buffer>()
  const mac = (secret: string) => createHmac('sha256', cacheKey).update(secret).digest()

  return async function verify(secret: string, hash: string): Promise<boolean> {
    const known = verified.get(hash)
    if (known) return timingSafeEqual(known, mac(secret))
    if (!(await bcrypt.compare(secret, hash))) return false
    if (verified.size >= maxEntries) verified.delete(verified.keys().next().value as string)
    verified.set(hash, mac(secret))
    return true
  }
}
export type SecretVerifier = ReturnType<typeof createSecretVerifier>
