import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import bcrypt from 'bcryptjs'

const BCRYPT_COST = 10

/**
 * Marks a hash of the SHA-256 of the secret. bcrypt reads only the first 72 bytes of its input, so
 * two secrets that share those bytes would pass for each other; the SHA-256 (base64: 44 ASCII
 * characters, no NUL byte that would end bcrypt's input) makes every byte count. Unmarked hashes,
 * written before, are bcrypt of the secret itself and stay verifiable.
 */
const PREHASHED = '$bcrypt-sha256$'

// Client secrets are random or at least 16 characters, so a salted bcrypt of their SHA-256 gives
// nothing away that a pepper (HMAC key) would protect: plain SHA-256 keeps hashes independent of
// MASTER_SECRET.
const prehash = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('base64')

/** bcrypt at rest (spec §2.5, §5 rule 5), of the secret's SHA-256 so that no byte is ignored. */
export async function hashSecret(secret: string): Promise<string> {
  return `${PREHASHED}${await bcrypt.hash(prehash(secret), BCRYPT_COST)}`
}

/** A hash written before secrets were pre-hashed: it checks only the first 72 bytes of a secret. */
export function isLegacySecretHash(hash: string): boolean {
  return !hash.startsWith(PREHASHED)
}

function compareSecret(secret: string, hash: string): Promise<boolean> {
  return hash.startsWith(PREHASHED)
    ? bcrypt.compare(prehash(secret), hash.slice(PREHASHED.length))
    : bcrypt.compare(secret, hash)
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
 * Every failure costs one full bcrypt compare, whether the client is unknown (`hash` undefined:
 * compared against a dummy hash), has never authenticated, or has a remembered success: the time
 * of a refusal does not tell which client ids exist.
 */
export function createSecretVerifier(options: { maxEntries?: number } = {}) {
  const maxEntries = options.maxEntries ?? 10_000
  const cacheKey = randomBytes(32)
  const verified = new Map<string, Buffer>()
  const mac = (secret: string) => createHmac('sha256', cacheKey).update(secret).digest()
  // Made on the first unknown client; nobody knows its secret.
  let dummyHash: Promise<string> | undefined

  return async function verify(secret: string, hash: string | undefined): Promise<boolean> {
    if (hash === undefined) {
      dummyHash ??= hashSecret(generateSecret())
      await compareSecret(secret, await dummyHash)
      return false
    }
    const known = verified.get(hash)
    if (known && timingSafeEqual(known, mac(secret))) return true
    if (!(await compareSecret(secret, hash))) return false
    if (verified.size >= maxEntries) verified.delete(verified.keys().next().value as string)
    verified.set(hash, mac(secret))
    return true
  }
}
export type SecretVerifier = ReturnType<typeof createSecretVerifier>
