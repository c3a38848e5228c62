import { createHash } from 'node:crypto'

/**
 * Issue 25: PEM `trustAnchors` of presentation configurations and wallet providers become `pem`
 * trust lists. The API, the config import, `config:migrate` and migration 0026 (SQL) must name a
 * set the same way, so one tenant's identical sets share one list: keep them in step
 * (anchor-lists.test.ts runs the SQL against this).
 */

// Only these four: PostgreSQL's btrim(pem, E' \t\r\n') strips the same characters.
const EDGE_WHITESPACE = /^[ \t\r\n]+|[ \t\r\n]+$/g

/** The certificates of the list: trimmed, once each, sorted by code unit (SQL: COLLATE "C"). */
export function anchorsTrustListCertificates(pems: readonly string[]): string[] {
  const trimmed = pems.map((pem) => pem.replace(EDGE_WHITESPACE, '')).filter((pem) => pem.length > 0)
  return [...new Set(trimmed)].sort()
}

/** `anchors-` and the first 12 hex digits of SHA-256 over the certificates joined by newlines. */
export function anchorsTrustListId(pems: readonly string[]): string {
  const joined = anchorsTrustListCertificates(pems).join('\n')
  return `anchors-${createHash('sha256').update(joined, 'utf8').digest('hex').slice(0, 12)}`
}

export const ANCHORS_TRUST_LIST_DESCRIPTION = 'Converted from trustAnchors (PEM)'
export const ANCHORS_TRUST_LIST_GRACE_SECONDS = 86_400
