import { and, eq, isNotNull, isNull } from 'drizzle-orm'
import type { Database } from '../database'
import { issuanceSessions, presentationSessions } from '../schema'

/** Encrypts a clear value of one session row (SessionDataCipher, bound to tenant and session id). */
export interface LegacySessionDataSealer {
  claims(tenantId: string, sessionId: string, claims: Record<string, Record<string, unknown>>): string
  result(tenantId: string, sessionId: string, result: Record<string, unknown>): string
}

/**
 * Upgrade step for rows written before migration 0007 (or by a pod of an older version during a
 * rolling upgrade): encrypts up to `limit` clear offer claims and `limit` clear presentation
 * results of any tenant and clears the clear column. SQL cannot do it (the key derives from
 * MASTER_SECRET). Each row is one conditional update: a row whose clear value changed or went
 * meanwhile is left for the next run. Returns how many rows of each kind were sealed.
 */
export async function sealLegacySessionData(
  db: Database,
  seal: LegacySessionDataSealer,
  limit = 500,
): Promise<{ issuance: number; presentation: number }> {
  const sealed = { issuance: 0, presentation: 0 }
  const offers = await db
    .select({
      tenantId: issuanceSessions.tenantId,
      id: issuanceSessions.id,
      clear: issuanceSessions.legacyClaims,
    })
    .from(issuanceSessions)
    .where(isNotNull(issuanceSessions.legacyClaims))
    .limit(limit)
  for (const row of offers) {
    if (!row.clear) continue
    const updated = await db
      .update(issuanceSessions)
      .set({ claimsEncrypted: seal.claims(row.tenantId, row.id, row.clear), legacyClaims: null })
      .where(
        and(
          eq(issuanceSessions.tenantId, row.tenantId),
          eq(issuanceSessions.id, row.id),
          eq(issuanceSessions.legacyClaims, row.clear),
          isNull(issuanceSessions.claimsEncrypted),
        ),
      )
      .returning({ id: issuanceSessions.id })
    sealed.issuance += updated.length
  }
  const results = await db
    .select({
      tenantId: presentationSessions.tenantId,
      id: presentationSessions.id,
      clear: presentationSessions.legacyResult,
    })
    .from(presentationSessions)
    .where(isNotNull(presentationSessions.legacyResult))
    .limit(limit)
  for (const row of results) {
    if (!row.clear) continue
    const updated = await db
      .update(presentationSessions)
      .set({ resultEncrypted: seal.result(row.tenantId, row.id, row.clear), legacyResult: null })
      .where(
        and(
          eq(presentationSessions.tenantId, row.tenantId),
          eq(presentationSessions.id, row.id),
          eq(presentationSessions.legacyResult, row.clear),
          isNull(presentationSessions.resultEncrypted),
        ),
      )
      .returning({ id: presentationSessions.id })
    sealed.presentation += updated.length
  }
  return sealed
}
