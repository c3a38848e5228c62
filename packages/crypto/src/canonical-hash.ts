import { createHash } from 'node:crypto'

/** JSON with object keys sorted at every level; arrays keep their order (DCQL arrays are ordered). */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
}

/**
 * SHA-256 (base64url) of a JSON value, independent of key order: tells whether a stored
 * registration certificate was issued for the DCQL query a configuration holds now.
 */
export function canonicalHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('base64url')
}
