const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz'
// Largest multiple of 36 below 256: bytes at or above it are skipped to keep the draw uniform.
const UNBIASED_LIMIT = 252
const POOL_SIZE = 4096

// One getRandomValues call per 4 KiB instead of one per id: the WebCrypto call costs far more
// than the bytes (every request id and session id draws from here).
const pool = new Uint8Array(POOL_SIZE)
let position = POOL_SIZE

function randomByte(): number {
  if (position === POOL_SIZE) {
    globalThis.crypto.getRandomValues(pool)
    position = 0
  }
  return pool[position++] as number
}

/**
 * Random identifier with a type prefix (`cli_…`, `ses_…`) so a log line says what it names.
 * 20 characters from a 36-letter alphabet carry ~103 bits of entropy.
 */
export function newId(prefix: string, length = 20): string {
  let out = ''
  while (out.length < length) {
    const byte = randomByte()
    if (byte < UNBIASED_LIMIT) out += ALPHABET[byte % ALPHABET.length]
  }
  return `${prefix}_${out}`
}
