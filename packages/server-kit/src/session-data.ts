import type { OfferClaims, PresentationResult, SessionDataCipher } from '@credential-service/crypto'
import type { IssuanceSessionRow, PresentationSessionRow } from '@credential-service/db-schema'

/**
 * The claims an offer still holds: decrypted, or read in clear from a row written before they were
 * encrypted (until the retention job seals it). Empty once the offer can no longer issue. Throws
 * DecryptionError for a ciphertext that is not this row's.
 */
export function offerClaims(cipher: SessionDataCipher, row: IssuanceSessionRow): OfferClaims {
  if (row.claimsEncrypted !== null) return cipher.openClaims(row.tenantId, row.id, row.claimsEncrypted)
  return row.legacyClaims ?? {}
}

/**
 * A presentation's disclosed claims, decrypted (or in clear from a row written before they were
 * encrypted); null when none were kept or they were released or dropped already.
 */
export function presentationResult(
  cipher: SessionDataCipher,
  row: PresentationSessionRow,
): PresentationResult | null {
  if (row.resultEncrypted !== null) return cipher.openResult(row.tenantId, row.id, row.resultEncrypted)
  return row.legacyResult ?? null
}
