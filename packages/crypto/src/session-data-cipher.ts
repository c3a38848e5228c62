import { createJsonCipher, DecryptionError } from './json-cipher'
import { deriveKeyMaterial } from './master-secret'

/** Claims an offer issues, per credential configuration id. */
export type OfferClaims = Record<string, Record<string, unknown>>
/** Disclosed claims of a verified presentation, per DCQL credential query id. */
export type PresentationResult = Record<string, unknown>

/**
 * Encrypts the personal data sessions hold at rest: an offer's claims and a presentation's
 * disclosed claims, AES-256-GCM. Each kind has its own key (HKDF `info`), and each value is bound
 * to its row by the additional data `["<tenant id>","<session id>"]`, so a ciphertext copied to
 * another session or tenant fails to decrypt (DecryptionError) instead of answering wrong data.
 */
export function createSessionDataCipher(masterSecret: string) {
  const claims = createJsonCipher(
    deriveKeyMaterial(masterSecret, 'offer-claims-encryption'),
    (context, cause) => new DecryptionError(`the offer claims of session ${context}`, { cause }),
  )
  const results = createJsonCipher(
    deriveKeyMaterial(masterSecret, 'presentation-result-encryption'),
    (context, cause) => new DecryptionError(`the presentation result of session ${context}`, { cause }),
  )
  // JSON keeps the two ids apart whatever characters they hold.
  const row = (tenantId: string, sessionId: string) => JSON.stringify([tenantId, sessionId])
  return {
    sealClaims: (tenantId: string, sessionId: string, value: OfferClaims): string =>
      claims.encrypt(value, row(tenantId, sessionId)),
    openClaims: (tenantId: string, sessionId: string, stored: string): OfferClaims =>
      claims.decrypt<OfferClaims>(stored, row(tenantId, sessionId)),
    sealResult: (tenantId: string, sessionId: string, value: PresentationResult): string =>
      results.encrypt(value, row(tenantId, sessionId)),
    openResult: (tenantId: string, sessionId: string, stored: string): PresentationResult =>
      results.decrypt<PresentationResult>(stored, row(tenantId, sessionId)),
  }
}
export type SessionDataCipher = ReturnType<typeof createSessionDataCipher>
