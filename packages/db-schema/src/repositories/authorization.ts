import { and, eq, gt, or, sql } from 'drizzle-orm'
import type { Database } from '../database'
import { type AuthorizationRequestRow, authorizationRequests, issuanceSessions } from '../schema'
import { deleteExpiredBatch } from './issuance'

export type NewAuthorizationRequest = Omit<
  typeof authorizationRequests.$inferInsert,
  'tenantId' | 'status' | 'createdAt' | 'updatedAt'
>

/**
 * Authorization code flows of one tenant. Each step takes its handle in one conditional update, so
 * of two requests with the same request_uri, login state, code or refresh token exactly one wins.
 */
export function createAuthorizationRequestRepository(db: Database, tenantId: string) {
  const t = authorizationRequests
  const mine = eq(t.tenantId, tenantId)
  const step = async (
    where: ReturnType<typeof and>,
    set: Record<string, unknown>,
  ): Promise<AuthorizationRequestRow | undefined> => {
    const [row] = await db
      .update(t)
      .set({ ...(set as Partial<typeof authorizationRequests.$inferInsert>), updatedAt: sql`now()` })
      .where(and(mine, where))
      .returning()
    return row
  }

  return {
    async insert(row: NewAuthorizationRequest): Promise<void> {
      await db.insert(t).values({ ...row, tenantId, status: 'pushed' })
    },

    /** PAR §4, §7.3: the request_uri is single-use, short-lived and bound to the pushing client. */
    takeRequestUri(
      requestUriHash: string,
      clientId: string,
      at: Date,
      next: Partial<AuthorizationRequestRow>,
    ) {
      return step(
        and(
          eq(t.requestUriHash, requestUriHash),
          eq(t.clientId, clientId),
          eq(t.status, 'pushed'),
          gt(t.expiresAt, at),
        ),
        { ...next, status: 'authorizing' },
      )
    },

    /**
     * PAR §4 allows a reload before the authorization completes (I-32): the request_uri is taken
     * again while its login is open, by the same client and from the browser the login was sent
     * from. Its expiry stays that of the first login.
     */
    retakeRequestUri(requestUriHash: string, clientId: string, loginBrowserHash: string, at: Date) {
      return step(
        and(
          eq(t.requestUriHash, requestUriHash),
          eq(t.clientId, clientId),
          eq(t.status, 'authorizing'),
          eq(t.loginBrowserHash, loginBrowserHash),
          gt(t.expiresAt, at),
        ),
        { status: 'authorizing' },
      )
    },

    /** Records the upstream login the browser was sent to (a reload replaces the previous one). */
    startLogin(
      id: string,
      login: {
        loginStateHash: string
        loginSecretsEncrypted: string
        loginProviderId: string
        loginBrowserHash: string
      },
    ) {
      return step(and(eq(t.id, id), eq(t.status, 'authorizing')), login)
    },

    /**
     * The browser returns from the upstream provider: the login state is single-use. The row
     * keeps the login secrets for the caller; issueCode and fail drop them.
     */
    takeLoginState(loginStateHash: string, at: Date) {
      return step(
        and(eq(t.loginStateHash, loginStateHash), eq(t.status, 'authorizing'), gt(t.expiresAt, at)),
        {
          status: 'logged_in',
        },
      )
    },

    /**
     * Hands out the code of an authorized request (after login, or directly), with the login's
     * claims for an offer's session, which its redemption moves into the session.
     */
    issueCode(
      id: string,
      from: string,
      code: { codeHash: string; sessionId: string; expiresAt: Date; loginClaimsEncrypted?: string },
    ) {
      return step(and(eq(t.id, id), eq(t.status, from)), {
        ...code,
        status: 'code_issued',
        loginStateHash: null,
        loginSecretsEncrypted: null,
        loginBrowserHash: null,
      })
    },

    fail(id: string) {
      return step(eq(t.id, id), {
        status: 'failed',
        loginStateHash: null,
        loginSecretsEncrypted: null,
        loginBrowserHash: null,
        loginClaimsEncrypted: null,
      })
    },

    /** RFC 6749 §4.1.3: the code is single-use and short-lived; the caller checks its bindings. */
    redeemCode(codeHash: string, at: Date) {
      return step(and(eq(t.codeHash, codeHash), eq(t.status, 'code_issued'), gt(t.expiresAt, at)), {
        status: 'redeemed',
      })
    },

    /**
     * The first refresh token of a redeemed grant, or none (the grant then ends with the code), the
     * DPoP key it is bound to and the end of its chain. The login claims went into the session with
     * the redemption: the copy here is dropped.
     */
    setRefreshToken(
      id: string,
      grant: {
        refreshTokenHash: string | null
        dpopJkt: string | null
        expiresAt: Date
        grantExpiresAt: Date
      },
    ) {
      return step(and(eq(t.id, id), eq(t.status, 'redeemed')), { ...grant, loginClaimsEncrypted: null })
    },

    /** The grant whose current or previous refresh token has this hash, in any status. */
    async byRefreshTokenHash(hash: string): Promise<AuthorizationRequestRow | undefined> {
      const [row] = await db
        .select()
        .from(t)
        .where(and(mine, or(eq(t.refreshTokenHash, hash), eq(t.previousRefreshTokenHash, hash))))
      return row
    },

    async byCodeHash(codeHash: string): Promise<AuthorizationRequestRow | undefined> {
      const [row] = await db
        .select()
        .from(t)
        .where(and(mine, eq(t.codeHash, codeHash)))
      return row
    },

    /** BCP 4.5, 4.14.2 (S-35): a reused code or refresh token revokes the grant, refresh token included. */
    revoke(id: string) {
      return step(eq(t.id, id), { status: 'revoked', refreshTokenHash: null, loginClaimsEncrypted: null })
    },

    /**
     * A one-time refresh token (BCP 2.2.2): swapped for the next one in one conditional update, so
     * of two requests with the same token exactly one gets a row. The old hash is kept for reuse
     * detection.
     */
    rotateRefreshToken(oldHash: string, newHash: string, at: Date, expiresAt: Date) {
      return step(and(eq(t.refreshTokenHash, oldHash), eq(t.status, 'redeemed'), gt(t.expiresAt, at)), {
        refreshTokenHash: newHash,
        previousRefreshTokenHash: oldHash,
        refreshCount: sql`${t.refreshCount} + 1`,
        expiresAt,
      })
    },
  }
}
export type AuthorizationRequestRepository = ReturnType<typeof createAuthorizationRequestRepository>

/** The open offer session named by an `issuer_state` (hashed), if any. */
export async function sessionByIssuerState(
  db: Database,
  tenantId: string,
  issuerStateHash: string,
  at: Date,
): Promise<{ id: string; credentialConfigurationIds: string[] } | undefined> {
  const [row] = await db
    .select({
      id: issuanceSessions.id,
      credentialConfigurationIds: issuanceSessions.credentialConfigurationIds,
    })
    .from(issuanceSessions)
    .where(
      and(
        eq(issuanceSessions.tenantId, tenantId),
        eq(issuanceSessions.issuerStateHash, issuerStateHash),
        eq(issuanceSessions.status, 'offered'),
        gt(issuanceSessions.expiresAt, at),
      ),
    )
  return row
}

/**
 * Deletes up to `limit` authorization requests of any tenant whose current handle expired before
 * `before`; returns how many. PAR is open to anyone, so abandoned requests must not pile up.
 */
export async function purgeExpiredAuthorizationRequests(db: Database, before: Date, limit = 1000) {
  return (await deleteExpiredBatch(db, authorizationRequests, authorizationRequests.id, before, limit)).length
}
