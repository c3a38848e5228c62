import { and, eq, gt, isNull, or, sql } from 'drizzle-orm'
import type { Database } from '../database'
import { type AuthorizationRequestRow, authorizationRequests, issuanceSessions } from '../schema'
import { deleteExpiredBatch } from './delete-expired-batch'
import { insertValues, param, prepared, preparedInsert } from './prepared'
import { rowsOf } from './rows'

export type NewAuthorizationRequest = Omit<
  typeof authorizationRequests.$inferInsert,
  'tenantId' | 'status' | 'createdAt' | 'updatedAt'
>

const INSERT_COLUMNS = [
  'tenantId',
  'id',
  'status',
  'requestUriHash',
  'clientId',
  'redirectUri',
  'codeChallenge',
  'state',
  'credentialConfigurationIds',
  'detailConfigurationIds',
  'sessionId',
  'dpopJkt',
  'attestedClientId',
  'attestationJkt',
  'expiresAt',
]

const t = authorizationRequests
const tenant = param('tenantId')
const at = param('at')
const stepOf = (d: Database, where: ReturnType<typeof and>, set: Record<string, unknown>) =>
  d
    .update(t)
    .set({ ...(set as Partial<typeof authorizationRequests.$inferInsert>), updatedAt: sql`now()` })
    .where(and(eq(t.tenantId, tenant), where))
    .returning()

// The steps every code flow takes (PAR, authorize, token), prepared once per database.
const statements = {
  takeRequestUri: (db: Database) =>
    prepared(db, 'authz_take_request_uri', (d) =>
      stepOf(
        d,
        and(
          eq(t.requestUriHash, param('requestUriHash')),
          eq(t.clientId, param('clientId')),
          eq(t.status, 'pushed'),
          gt(t.expiresAt, at),
        ),
        { status: 'authorizing', expiresAt: param('expiresAt') },
      ),
    ),
  issueCode: (db: Database) =>
    prepared(db, 'authz_issue_code', (d) =>
      stepOf(d, and(eq(t.id, param('id')), eq(t.status, param('from'))), {
        status: 'code_issued',
        codeHash: param('codeHash'),
        sessionId: param('sessionId'),
        expiresAt: param('expiresAt'),
        loginClaimsEncrypted: param('loginClaimsEncrypted'),
        loginStateHash: null,
        loginSecretsEncrypted: null,
        loginBrowserHash: null,
      }),
    ),
  redeemCode: (db: Database) =>
    prepared(db, 'authz_redeem_code', (d) =>
      stepOf(
        d,
        and(
          eq(t.codeHash, param('codeHash')),
          eq(t.status, 'code_issued'),
          gt(t.expiresAt, at),
          // A token request without redirect_uri redeems only a code whose request had none.
          eq(t.redirectUri, sql`coalesce(${param('redirectUriOmitted')}::text, ${t.redirectUri})`),
        ),
        { status: 'redeemed' },
      ),
    ),
  setRefreshToken: (db: Database) =>
    prepared(db, 'authz_set_refresh_token', (d) =>
      stepOf(d, and(eq(t.id, param('id')), eq(t.status, 'redeemed')), {
        refreshTokenHash: param('refreshTokenHash'),
        dpopJkt: param('dpopJkt'),
        expiresAt: param('expiresAt'),
        grantExpiresAt: param('grantExpiresAt'),
        loginClaimsEncrypted: null,
      }),
    ),
  sessionByIssuerState: (db: Database) =>
    prepared(db, 'authz_session_by_issuer_state', (d) =>
      d
        .select({
          id: issuanceSessions.id,
          credentialConfigurationIds: issuanceSessions.credentialConfigurationIds,
        })
        .from(issuanceSessions)
        .where(
          and(
            eq(issuanceSessions.tenantId, tenant),
            eq(issuanceSessions.issuerStateHash, param('issuerStateHash')),
            eq(issuanceSessions.status, 'offered'),
            gt(issuanceSessions.expiresAt, at),
          ),
        ),
    ),
}
const iso = (date: Date) => date.toISOString()

/**
 * Authorization code flows of one tenant. Each step takes its handle in one conditional update, so
 * of two requests with the same request_uri, login state, code or refresh token exactly one wins.
 */
export function createAuthorizationRequestRepository(db: Database, tenantId: string) {
  const mine = eq(t.tenantId, tenantId)
  // The rarer steps (login, refresh, revoke) are built per call, as the prepared ones are built.
  const step = async (
    where: ReturnType<typeof and>,
    set: Record<string, unknown>,
  ): Promise<AuthorizationRequestRow | undefined> => {
    const [row] = await stepOf(db, where, set).execute({ tenantId })
    return row
  }

  return {
    async insert(row: NewAuthorizationRequest): Promise<AuthorizationRequestRow> {
      const values = insertValues(t, INSERT_COLUMNS, { ...row, tenantId, status: 'pushed' })
      const [inserted] = await preparedInsert(db, 'authz_insert', t, INSERT_COLUMNS).execute(values)
      return inserted as AuthorizationRequestRow
    },

    /**
     * A grant without an authorization request (a pre-authorized code's refresh tokens): stored
     * redeemed, with a random never-handed-out request_uri hash and no redirect or PKCE values.
     */
    async insertGrant(row: NewAuthorizationRequest): Promise<void> {
      await db.insert(t).values({ ...row, tenantId, status: 'redeemed' })
    },

    /** PAR §4, §7.3: the request_uri is single-use, short-lived and bound to the pushing client. */
    async takeRequestUri(
      requestUriHash: string,
      clientId: string,
      at: Date,
      next: { expiresAt: Date },
    ): Promise<AuthorizationRequestRow | undefined> {
      const [row] = await statements.takeRequestUri(db).execute({
        tenantId,
        requestUriHash,
        clientId,
        at: iso(at),
        expiresAt: iso(next.expiresAt),
      })
      return row
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
     * Records a presentation login (kind `presentation`): its two presentation sessions and the
     * browser that must finish it (a reload replaces the previous ones).
     */
    startPresentationLogin(
      id: string,
      login: {
        loginProviderId: string
        loginBrowserHash: string
        presentationSessionId: string
        sameDevicePresentationSessionId: string
      },
    ) {
      return step(and(eq(t.id, id), eq(t.status, 'authorizing')), {
        ...login,
        loginStateHash: null,
        loginSecretsEncrypted: null,
      })
    },

    /** A presentation login's request, for the browser holding its login cookie, while it is open. */
    async presentationLoginOf(
      id: string,
      loginBrowserHash: string,
    ): Promise<AuthorizationRequestRow | undefined> {
      const [row] = await db
        .select()
        .from(t)
        .where(and(mine, eq(t.id, id), eq(t.loginBrowserHash, loginBrowserHash)))
      return row
    },

    /**
     * A verified presentation logs the holder in: one conditional update, so of two browsers or
     * processes finishing the same request exactly one goes on to issue the code.
     */
    takePresentationLogin(id: string, loginBrowserHash: string, at: Date) {
      return step(
        and(
          eq(t.id, id),
          eq(t.status, 'authorizing'),
          eq(t.loginBrowserHash, loginBrowserHash),
          gt(t.expiresAt, at),
        ),
        { status: 'logged_in' },
      )
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
    async issueCode(
      id: string,
      from: string,
      code: { codeHash: string; sessionId: string; expiresAt: Date; loginClaimsEncrypted?: string },
    ): Promise<AuthorizationRequestRow | undefined> {
      const [row] = await statements.issueCode(db).execute({
        tenantId,
        id,
        from,
        codeHash: code.codeHash,
        sessionId: code.sessionId,
        expiresAt: iso(code.expiresAt),
        loginClaimsEncrypted: code.loginClaimsEncrypted ?? null,
      })
      return row
    },

    /**
     * issueCode for a flow without an offer: the code and the flow's own issuance session (status
     * `offered`) in one statement. The session is stored only when the code is handed out.
     */
    async issueCodeWithSession(
      id: string,
      from: string,
      code: { codeHash: string; expiresAt: Date },
      session: {
        id: string
        credentialConfigurationIds: string[]
        claimsEncrypted: string
        preAuthorizedCodeHash: string
        createdByClientId: string
        expiresAt: Date
      },
    ): Promise<boolean> {
      const v = insertValues(issuanceSessions, ['credentialConfigurationIds', 'expiresAt'], session)
      const result = await db.execute(sql`
        with issued as (
          update ${t} set status = 'code_issued', code_hash = ${code.codeHash}, session_id = ${session.id},
            expires_at = ${iso(code.expiresAt)}::timestamptz, login_claims_encrypted = null,
            login_state_hash = null, login_secrets_encrypted = null, login_browser_hash = null,
            updated_at = now()
          where tenant_id = ${tenantId} and id = ${id} and status = ${from}
          returning id
        )
        insert into ${issuanceSessions} (tenant_id, id, status, credential_configuration_ids,
          claims_encrypted, pre_authorized_code_hash, created_by_client_id, expires_at)
        select ${tenantId}::text, ${session.id}::text, 'offered', ${v.credentialConfigurationIds}::text[],
          ${session.claimsEncrypted}::text, ${session.preAuthorizedCodeHash}::text,
          ${session.createdByClientId}::text, ${v.expiresAt}::timestamptz
        from issued
        returning id`)
      return rowsOf(result).length > 0
    },

    /**
     * OpenID4VCI 1.1 Interactive Authorization: the pushed request now waits for its interaction,
     * reachable by the `auth_session` (hashed) until `expiresAt`.
     */
    startInteraction(
      id: string,
      interaction: {
        authSessionHash: string
        interactionType: 'presentation' | 'web'
        presentationSessionId: string | null
        expiresAt: Date
      },
    ) {
      return step(and(eq(t.id, id), eq(t.status, 'pushed')), interaction)
    },

    /** The request an `auth_session` names while it waits, without taking it (why a take failed). */
    async byAuthSession(authSessionHash: string, at: Date): Promise<AuthorizationRequestRow | undefined> {
      const [row] = await db
        .select()
        .from(t)
        .where(and(mine, eq(t.authSessionHash, authSessionHash), eq(t.status, 'pushed'), gt(t.expiresAt, at)))
      return row
    },

    /**
     * Takes a presentation interaction's `auth_session` (single use) for the sender of its Initial
     * Request (its DPoP key and attested wallet instance, where it had them): one conditional
     * update, so of two follow-ups with the same auth_session, in any process, exactly one gets the
     * row, and another sender's follow-up leaves it to its owner.
     */
    takeAuthSession(
      authSessionHash: string,
      at: Date,
      sender: { dpopJkt: string | null; attestationJkt: string | null },
    ) {
      return step(
        and(
          eq(t.authSessionHash, authSessionHash),
          eq(t.interactionType, 'presentation'),
          eq(t.status, 'pushed'),
          gt(t.expiresAt, at),
          or(isNull(t.dpopJkt), eq(t.dpopJkt, sender.dpopJkt ?? '')),
          or(isNull(t.attestationJkt), eq(t.attestationJkt, sender.attestationJkt ?? '')),
        ),
        { status: 'authorizing' },
      )
    },

    /** Gives a taken `auth_session` back when its presentation could not be judged now (a retry may follow). */
    releaseAuthSession(id: string) {
      return step(and(eq(t.id, id), eq(t.status, 'authorizing')), { status: 'pushed' })
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

    /**
     * RFC 6749 §4.1.3: the code is single-use and short-lived; the caller checks its bindings.
     * Without a `redirectUri` only a code whose request had none (Interactive Authorization) is
     * redeemed: another is left unspent for the wallet to retry with one.
     */
    async redeemCode(
      codeHash: string,
      at: Date,
      redirectUri: string | undefined,
    ): Promise<AuthorizationRequestRow | undefined> {
      const [row] = await statements.redeemCode(db).execute({
        tenantId,
        codeHash,
        at: iso(at),
        redirectUriOmitted: redirectUri === undefined ? '' : null,
      })
      return row
    },

    /**
     * The first refresh token of a redeemed grant, or none (the grant then ends with the code), the
     * DPoP key it is bound to and the end of its chain. The login claims went into the session with
     * the redemption: the copy here is dropped.
     */
    async setRefreshToken(
      id: string,
      grant: {
        refreshTokenHash: string | null
        dpopJkt: string | null
        expiresAt: Date
        grantExpiresAt: Date
      },
    ): Promise<AuthorizationRequestRow | undefined> {
      const [row] = await statements.setRefreshToken(db).execute({
        tenantId,
        id,
        refreshTokenHash: grant.refreshTokenHash,
        dpopJkt: grant.dpopJkt,
        expiresAt: iso(grant.expiresAt),
        grantExpiresAt: iso(grant.grantExpiresAt),
      })
      return row
    },

    /** The grant whose current or previous refresh token has this hash, in any status. */
    async byRefreshTokenHash(hash: string): Promise<AuthorizationRequestRow | undefined> {
      const [row] = await db
        .select()
        .from(t)
        .where(and(mine, or(eq(t.refreshTokenHash, hash), eq(t.previousRefreshTokenHash, hash))))
      return row
    },

    async byId(id: string): Promise<AuthorizationRequestRow | undefined> {
      const [row] = await db
        .select()
        .from(t)
        .where(and(mine, eq(t.id, id)))
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
  const [row] = await statements.sessionByIssuerState(db).execute({ tenantId, issuerStateHash, at: iso(at) })
  return row
}

/**
 * Deletes up to `limit` authorization requests of any tenant whose current handle expired before
 * `before`; returns how many. PAR is open to anyone, so abandoned requests must not pile up.
 */
export async function purgeExpiredAuthorizationRequests(db: Database, before: Date, limit = 1000) {
  return (await deleteExpiredBatch(db, authorizationRequests, authorizationRequests.id, before, limit)).length
}
