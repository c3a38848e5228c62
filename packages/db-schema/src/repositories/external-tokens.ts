import { and, eq, gt } from 'drizzle-orm'
import type { Database } from '../database'
import { type IssuanceSessionRow, issuanceSessions } from '../schema'
import type { NewIssuanceSession } from './issuance'

/**
 * Issuance sessions bound to an external authorization server's access token (OpenID4VCI 1.0
 * §12.2.4): by the token's key (server id and `jti`, or a hash of the token). The unique index on
 * the key makes the first binding of a token the only one, across processes.
 */
export function createExternalTokenSessionRepository(db: Database, tenantId: string) {
  const key = (value: string) =>
    and(eq(issuanceSessions.tenantId, tenantId), eq(issuanceSessions.externalTokenKey, value))
  return {
    /** The session a token was bound to before, if any. */
    async sessionOf(tokenKey: string): Promise<IssuanceSessionRow | undefined> {
      const [row] = await db.select().from(issuanceSessions).where(key(tokenKey))
      return row
    },

    /** A new session for the token; undefined when another request bound the token first. */
    async start(
      row: Omit<NewIssuanceSession, 'externalTokenKey'>,
      tokenKey: string,
    ): Promise<IssuanceSessionRow | undefined> {
      const [inserted] = await db
        .insert(issuanceSessions)
        .values({ ...row, tenantId, externalTokenKey: tokenKey })
        .onConflictDoNothing({ target: [issuanceSessions.tenantId, issuanceSessions.externalTokenKey] })
        .returning()
      return inserted
    },

    /**
     * Binds the open offer of `issuer_state` (hashed) to the token, in one statement: only an
     * offered, unexpired session matches, so one token (and one wallet) redeems an offer.
     */
    async bindOffer(
      issuerStateHash: string,
      tokenKey: string,
      at: Date,
    ): Promise<IssuanceSessionRow | undefined> {
      const [row] = await db
        .update(issuanceSessions)
        .set({
          status: 'token_issued',
          tokenIssuedAt: at,
          externalTokenKey: tokenKey,
          offerCodeEncrypted: null,
          updatedAt: at,
        })
        .where(
          and(
            eq(issuanceSessions.tenantId, tenantId),
            eq(issuanceSessions.issuerStateHash, issuerStateHash),
            eq(issuanceSessions.status, 'offered'),
            gt(issuanceSessions.expiresAt, at),
          ),
        )
        .returning()
      return row
    },
  }
}
export type ExternalTokenSessionRepository = ReturnType<typeof createExternalTokenSessionRepository>
