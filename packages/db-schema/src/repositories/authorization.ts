import { and, eq, getTableColumns, gt, isNull, or, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../database'
import {
  type AuthorizationRequestRow,
  authorizationRequests,
  issuanceSessions,
  type PresentationSessionRow,
  presentationSessions,
} from '../schema'
import { deleteExpiredBatch } from './delete-expired-batch'
import { insertValues, param, prepared, preparedInsert } from './prepared'
import { type NewPresentationSession, PRESENTATION_INSERT_COLUMNS } from './presentation'

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
  // Interactive Authorization: stored with the request, whose interaction is known when it is pushed.
  'authSessionHash',
  'interactionType',
  'presentationSessionId',
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
  // Interactive Authorization's Initial Request: the pushed request and its presentation session.
  insertWithPresentation: (db: Database) =>
    prepared(db, 'authz_insert_with_presentation', (d) => {
      const presentation = d.$with('presentation').as(
        d
          .insert(presentationSessions)
          .values(Object.fromEntries(PRESENTATION_INSERT_COLUMNS.map((c) => [c, param(`p_${c}`)])) as never)
          .returning(),
      )
      const request = d.$with('request').as(
        d
          .insert(t)
          .values(Object.fromEntries(INSERT_COLUMNS.map((c) => [c, param(c)])) as never)
          .returning({ id: t.id }),
      )
      return d
        .with(presentation, request)
        .select()
        .from(presentation)
        .where(sql`exists (select 1 from ${request})`)
    }),
  // The auth_session taken, with the presentation session its answer is bound to.
  takeAuthSession: (db: Database) =>
    prepared(db, 'authz_take_auth_session', (d) => {
      const taken = d
        .$with('taken')
        .as(
          stepOf(
            d,
            and(
              eq(t.authSessionHash, param('authSessionHash')),
              eq(t.interactionType, 'presentation'),
              eq(t.status, 'pushed'),
              gt(t.expiresAt, at),
              or(isNull(t.dpopJkt), eq(t.dpopJkt, param('dpopJkt'))),
              or(isNull(t.attestationJkt), eq(t.attestationJkt, param('attestationJkt'))),
            ),
            { status: 'authorizing' },
          ),
        )
      const p = presentationSessions
      return d
        .with(taken)
        .select()
        .from(taken)
        .leftJoin(p, and(eq(p.tenantId, taken.tenantId), eq(p.id, taken.presentationSessionId)))
    }),
  // The holder's code and the flow's own session; with a presentation id, only if this statement
  // also verifies that (pending) presentation.
  issueCodeWithSession: (db: Database) =>
    prepared(db, 'authz_issue_code_with_session', (d) => {
      const presentationId = sql`${param('presentationSessionId')}::text`
      const verified = d.$with('verified', { id: sql<string>`id` }).as(sql`
        update ${presentationSessions} set status = 'verified', response_received_at = ${at}::timestamptz,
          updated_at = now()
        where tenant_id = ${tenant} and id = ${presentationId} and status = 'pending'
        returning id`)
      const issued = d.$with('issued', { id: sql<string>`id` }).as(sql`
        update ${t} set status = 'code_issued', code_hash = ${param('codeHash')}::text,
          session_id = ${param('sessionId')}::text, expires_at = ${param('expiresAt')}::timestamptz,
          login_claims_encrypted = null, login_state_hash = null, login_secrets_encrypted = null,
          login_browser_hash = null, updated_at = now()
        where tenant_id = ${tenant} and id = ${param('id')}::text and status = ${param('from')}::text
          and (${presentationId} is null or exists (select 1 from verified))
        returning id`)
      const session = d.$with('session', { id: sql<string>`id` }).as(sql`
        insert into ${issuanceSessions} (tenant_id, id, status, credential_configuration_ids,
          claims_encrypted, pre_authorized_code_hash, created_by_client_id, expires_at)
        select ${tenant}::text, ${param('sessionId')}::text, 'offered', ${param('configurationIds')}::text[],
          ${param('claimsEncrypted')}::text, ${param('preAuthorizedCodeHash')}::text,
          ${param('createdByClientId')}::text, ${param('sessionExpiresAt')}::timestamptz
        from issued
        returning id`)
      return d
        .with(verified, issued, session)
        .select({
          issued: sql<number>`(select count(*) from ${session})::int`,
          verified: sql<number>`(select count(*) from ${verified})::int`,
        })
        .from(sql`(select 1) as one`)
    }),
  // The token request's one statement (RFC 6749 §4.1.3): the code spent; when its bindings hold
  // (client, redirect_uri, PKCE, DPoP key, attested client) its session's token issued with the
  // holder's claims; when both, the grant's refresh token chain started. The code row is locked
  // first, so of two redemptions of one code exactly one sees it issued.
  redeemCodeGrant: (db: Database) =>
    prepared(db, 'authz_redeem_code_grant', (d) => {
      const dpopJkt = sql`${param('dpopJkt')}::text`
      const code = d.$with('code', { id: sql<string>`id` }).as(sql`
        select id, session_id, nullif(login_claims_encrypted, '') as login_claims,
          coalesce(client_id = ${param('clientId')}::text and redirect_uri = ${param('redirectUri')}::text
            and code_challenge = ${param('codeChallenge')}::text
            and (dpop_jkt is null or dpop_jkt = ${dpopJkt})
            and (attested_client_id is null or attested_client_id = ${param('attestedClientId')}::text),
            false) as bound
        from ${t}
        where tenant_id = ${tenant} and code_hash = ${param('codeHash')}::text and status = 'code_issued'
          and expires_at > ${at}::timestamptz
          and redirect_uri = coalesce(${param('redirectUriOmitted')}::text, redirect_uri)
        for update`)
      // The holder login's claims, when the code flow had one, replace the offer's.
      const session = d.$with('session', { id: sql<string>`id` }).as(sql`
        update ${issuanceSessions} s set status = 'token_issued', token_issued_at = ${at}::timestamptz,
          offer_code_encrypted = null, claims_encrypted = coalesce(code.login_claims, s.claims_encrypted),
          claims = case when code.login_claims is null then s.claims end, updated_at = now()
        from code
        where code.bound and s.tenant_id = ${tenant} and s.id = code.session_id and s.status = 'offered'
          and s.expires_at > ${at}::timestamptz
        returning s.id`)
      const authorized = sql`exists (select 1 from ${session})`
      const refreshing = sql`${t.credentialConfigurationIds} && array(select jsonb_array_elements_text(${param('refreshing')}::jsonb))`
      const whenAuthorized = (value: SQL, otherwise: SQL) =>
        sql`case when ${authorized} then ${value} else ${otherwise} end`
      return d
        .with(code, session)
        .update(t)
        .set({
          status: 'redeemed',
          refreshTokenHash: whenAuthorized(
            sql`case when ${refreshing} then ${param('refreshTokenHash')}::text end`,
            sql`${t.refreshTokenHash}`,
          ),
          // RFC 9449 §5: a public client's refresh token is bound to the DPoP key used here.
          dpopJkt: whenAuthorized(sql`coalesce(${t.dpopJkt}, ${dpopJkt})`, sql`${t.dpopJkt}`),
          expiresAt: whenAuthorized(sql`${param('refreshExpiresAt')}::timestamptz`, sql`${t.expiresAt}`),
          grantExpiresAt: whenAuthorized(
            sql`${param('grantExpiresAt')}::timestamptz`,
            sql`${t.grantExpiresAt}`,
          ),
          // The login claims went into the session: the copy here is dropped.
          loginClaimsEncrypted: whenAuthorized(sql`null`, sql`${t.loginClaimsEncrypted}`),
          updatedAt: sql`now()`,
        })
        .where(
          and(eq(t.tenantId, tenant), sql`${t.id} = (select id from ${code})`, eq(t.status, 'code_issued')),
        )
        .returning({ ...getTableColumns(t), authorized: sql<boolean>`${authorized}` })
    }),
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
     * `offered`) in one statement. The session is stored only when the code is handed out. With
     * `presentationSessionId` (Interactive Authorization), the same statement verifies that pending
     * presentation, and the code is handed out only if it did (`verified` false: answered already).
     */
    async issueCodeWithSession(
      id: string,
      from: string,
      code: { codeHash: string; expiresAt: Date; presentationSessionId?: string; at?: Date },
      session: {
        id: string
        credentialConfigurationIds: string[]
        claimsEncrypted: string
        preAuthorizedCodeHash: string
        createdByClientId: string
        expiresAt: Date
      },
    ): Promise<{ issued: boolean; verified: boolean }> {
      const v = insertValues(issuanceSessions, ['credentialConfigurationIds'], session)
      const [row] = await statements.issueCodeWithSession(db).execute({
        tenantId,
        id,
        from,
        at: iso(code.at ?? new Date()),
        presentationSessionId: code.presentationSessionId ?? null,
        codeHash: code.codeHash,
        expiresAt: iso(code.expiresAt),
        sessionId: session.id,
        configurationIds: v.credentialConfigurationIds,
        claimsEncrypted: session.claimsEncrypted,
        preAuthorizedCodeHash: session.preAuthorizedCodeHash,
        createdByClientId: session.createdByClientId,
        sessionExpiresAt: iso(session.expiresAt),
      })
      return { issued: Number(row?.issued) > 0, verified: Number(row?.verified) > 0 }
    },

    /**
     * OpenID4VCI 1.1 Interactive Authorization's Initial Request answered with a presentation: the
     * pushed request, waiting for it (its `authSessionHash`, interaction and presentation session
     * set), and that presentation session, in one statement. Returns the session as stored.
     */
    async insertWithPresentation(
      row: NewAuthorizationRequest,
      presentation: NewPresentationSession,
    ): Promise<PresentationSessionRow> {
      const request = insertValues(t, INSERT_COLUMNS, { ...row, tenantId, status: 'pushed' })
      const session = insertValues(presentationSessions, PRESENTATION_INSERT_COLUMNS, {
        ...presentation,
        tenantId,
      })
      const [stored] = await statements.insertWithPresentation(db).execute({
        ...request,
        ...Object.fromEntries(Object.entries(session).map(([column, value]) => [`p_${column}`, value])),
      })
      return stored as PresentationSessionRow
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
     * row, and another sender's follow-up leaves it to its owner. The presentation session the
     * answer is bound to comes with it (undefined when gone).
     */
    async takeAuthSession(
      authSessionHash: string,
      at: Date,
      sender: { dpopJkt: string | null; attestationJkt: string | null },
    ): Promise<
      { row: AuthorizationRequestRow; presentation: PresentationSessionRow | undefined } | undefined
    > {
      const [taken] = await statements.takeAuthSession(db).execute({
        tenantId,
        authSessionHash,
        at: iso(at),
        dpopJkt: sender.dpopJkt ?? '',
        attestationJkt: sender.attestationJkt ?? '',
      })
      return taken && { row: taken.taken, presentation: taken.presentation_sessions ?? undefined }
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
     * RFC 6749 §4.1.3: the code is single-use and short-lived, spent by the one statement of the
     * token request (`redeemCodeGrant` above). Without a `redirectUri` only a code whose request had
     * none (Interactive Authorization) is redeemed: another is left unspent for the wallet to retry
     * with one. The row comes back spent whatever its bindings; `authorized` when they held and its
     * session's token was issued (the caller checks the bindings again to say which failed). The
     * refresh token (hashed) is stored when the grant has one of the `refreshing` configurations.
     */
    async redeemCodeGrant(
      codeHash: string,
      at: Date,
      request: {
        redirectUri: string | undefined
        clientId: string
        /** The hash of a well-formed code_verifier (RFC 7636 §4.6), else null. */
        codeChallenge: string | null
        dpopJkt: string | null
        attestedClientId: string | null
      },
      grant: { refreshing: string[]; refreshTokenHash: string; expiresAt: Date; grantExpiresAt: Date },
    ): Promise<(AuthorizationRequestRow & { authorized: boolean }) | undefined> {
      const [row] = await statements.redeemCodeGrant(db).execute({
        tenantId,
        codeHash,
        at: iso(at),
        redirectUriOmitted: request.redirectUri === undefined ? '' : null,
        redirectUri: request.redirectUri ?? '',
        clientId: request.clientId,
        codeChallenge: request.codeChallenge,
        dpopJkt: request.dpopJkt,
        attestedClientId: request.attestedClientId,
        refreshing: JSON.stringify(grant.refreshing),
        refreshTokenHash: grant.refreshTokenHash,
        refreshExpiresAt: iso(grant.expiresAt),
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
