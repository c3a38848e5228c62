/**
 * Deepest nesting of arrays and objects a JSON body may have. Our own shapes stop at about ten
 * levels (claims of an offer, DCQL); a 10,000-deep body otherwise reaches recursive code (zod,
 * JSON.stringify, PostgreSQL's jsonb parser) and ends as a stack overflow, that is a 500.
 */
export const MAX_JSON_DEPTH = 64

/**
 * Depth of a JSON text without parsing it: one pass over the characters, brackets inside strings
 * ignored. Stops at the first level beyond `limit`, so a deep body costs no more than its prefix.
 */
export function exceedsJsonDepth(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (inString) {
      // A backslash escapes the next character, a quote among others.
      if (code === 0x5c) i++
      else if (code === 0x22) inString = false
    } else if (code === 0x22) inString = true
    else if (code === 0x5b || code === 0x7b) {
      if (++depth > limit) return true
    } else if (code === 0x5d || code === 0x7d) depth--
  }
  return false
}
