const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz'
// Largest multiple of 36 below 256: bytes at or above it are skipped to keep the draw uniform.
const UNBIASED_LIMIT = 252

/**
 * Random identifier with a type prefix (`cli_…`, `ses_…`) so a log line says what it names.
 * 20 characters from a 36-letter alphabet carry ~103 bits of entropy.
 */
export function newId(prefix: string, length = 20): string {
  let out = ''
  while (out.length < length) {
    for (const byte of globalThis.crypto.getRandomValues(new Uint8Array(length))) {
      if (byte < UNBIASED_LIMIT && out.length < length) out += ALPHABET[byte % ALPHABET.length]
    }
  }
  return `${prefix}_${out}`
}
