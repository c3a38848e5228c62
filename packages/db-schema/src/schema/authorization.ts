import { check, index, integer, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { oneOf } from './one-of'
import { tenants } from './tenants'

/**
 * The statuses an authorization request is stored with, which a CHECK holds the column to:
 * the steps of the flow, `failed` (a refused login) and `revoked` (a reused refresh token).
 */
export const AUTHORIZATION_REQUEST_STATUSES = [
  'pushed',
  'authorizing',
  'logged_in',
  'code_issued',
  'redeemed',
  'failed',
  'revoked',
] as const

/**
 * One authorization code flow (OpenID4VCI 1.0 §5): the pushed request (RFC 9126), the upstream
 * login, the code and the refresh token. Every handle the wallet or browser holds (request_uri,
 * login state, code, refresh token) is stored as a SHA-256 hash; `status` moves
 * pushed → authorizing → code_issued → redeemed (or failed), each step one conditional update.
 */
export const authorizationRequests = pgTable(
  'authorization_requests',
  {
    tenantId: text()
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    id: text().notNull(),
    status: text().notNull(),
    requestUriHash: text().notNull(),
    clientId: text().notNull(),
    redirectUri: text().notNull(),
    codeChallenge: text().notNull(),
    state: text(),
    /** Configurations the wallet asked for, by scope or authorization_details. */
    credentialConfigurationIds: text().array().notNull(),
    /** Configurations asked for with authorization_details: the token answers credential_identifiers. */
    detailConfigurationIds: text().array().notNull(),
    /** The offer's session (issuer_state), or the session created at authorization. */
    sessionId: text(),
    /** The DPoP key of the grant: pushed with the request, else the one the code was redeemed with. */
    dpopJkt: text(),
    /** The attested client (wallet attestation `sub`) of the pushed request: the token request must be too. */
    attestedClientId: text(),
    /** The attested wallet instance (thumbprint of the attestation's cnf.jwk) that pushed the request. */
    attestationJkt: text(),
    /** Upstream login: our state (hashed), and nonce + PKCE verifier encrypted. */
    loginStateHash: text(),
    loginSecretsEncrypted: text(),
    /** The login provider chosen at /authorize; the callback uses this one. */
    loginProviderId: text(),
    /** Hash of the cookie set in the browser sent to the login: the callback must come from it. */
    loginBrowserHash: text(),
    /**
     * Presentation login (a provider of kind `presentation`): the cross-device presentation session
     * (shown as a QR code, completed when the browser's page sees it verified) and the same-device
     * one (completed only when the browser with the login cookie returns with its response code).
     * With Interactive Authorization, `presentationSessionId` is the inline presentation's session.
     */
    presentationSessionId: text(),
    sameDevicePresentationSessionId: text(),
    /**
     * The offer session's claims with this login's claims, sealed for the session: they replace the
     * session's claims only when this request's code redeems the session.
     */
    loginClaimsEncrypted: text(),
    /**
     * Interactive Authorization (OpenID4VCI 1.1): the `auth_session` handed out with the interaction
     * (hashed), single use; the interaction required (`presentation` | `web`) and, for a presentation,
     * the presentation session (`presentationSessionId`) whose nonce and key the answer is bound to.
     */
    authSessionHash: text(),
    interactionType: text(),
    codeHash: text(),
    refreshTokenHash: text(),
    /** The refresh token the current one replaced: presented again, it revokes the grant (BCP 4.14.2). */
    previousRefreshTokenHash: text(),
    refreshCount: integer().notNull().default(0),
    /** The end of the refresh token chain, fixed when the code is redeemed: no refresh extends it. */
    grantExpiresAt: timestamp({ withTimezone: true }),
    /** Until when the current handle (request_uri, login, code or refresh token) is valid. */
    expiresAt: timestamp({ withTimezone: true }).notNull(),
    createdAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    uniqueIndex('authorization_requests_request_uri').on(t.tenantId, t.requestUriHash),
    uniqueIndex('authorization_requests_login_state').on(t.tenantId, t.loginStateHash),
    uniqueIndex('authorization_requests_code').on(t.tenantId, t.codeHash),
    uniqueIndex('authorization_requests_auth_session').on(t.tenantId, t.authSessionHash),
    uniqueIndex('authorization_requests_refresh').on(t.tenantId, t.refreshTokenHash),
    uniqueIndex('authorization_requests_previous_refresh').on(t.tenantId, t.previousRefreshTokenHash),
    index('authorization_requests_expiry').on(t.expiresAt),
    check('authorization_requests_status_check', oneOf(t.status, AUTHORIZATION_REQUEST_STATUSES)),
  ],
)
export type AuthorizationRequestRow = typeof authorizationRequests.$inferSelect
