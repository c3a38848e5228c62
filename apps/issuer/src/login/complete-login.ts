import { newId, ProtocolError } from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import type { AuthorizationRequestRow } from '@credential-service/db-schema'
import { offerClaims } from '@credential-service/server-kit'
import { CODE_SECONDS, issueCode } from './issue-code'
import { type HolderLogin, loginClaims } from './login-claims'
import { configsOf, type LoginScope, newHandle } from './login-scope'

/** Lifetime of an issuance session a wallet-initiated flow creates. */
const SESSION_SECONDS = 600

/**
 * A pending presentation the code's statement verifies (Interactive Authorization, a flow without
 * an offer): the code is handed out only if it does; `answered` is thrown when it was answered already.
 */
export interface PresentationVerified {
  presentationSessionId: string
  at: Date
  answered: () => Error
}

/** A login's end: the request's authorization code, or why the holder is refused. */
export type LoginOutcome = { code: string } | { denied: string }

type ClaimsByConfiguration = Record<string, Record<string, unknown>>

/**
 * The holder logged in (whatever the login kind): their claims fill the requested configurations,
 * kept sealed with the request (an offer's) or in a new session (a wallet-initiated flow), and the
 * request gets its code. A refusal names why.
 */
export async function completeLogin(
  scope: LoginScope,
  row: AuthorizationRequestRow,
  login: HolderLogin,
  verifies?: PresentationVerified,
): Promise<LoginOutcome> {
  const configs = await configsOf(scope, row.credentialConfigurationIds)
  const sessionId = row.sessionId ?? newId('ses')
  const claims = await loginClaims(scope, { sessionId, configs, login })
  if (!claims.ok) return { denied: claims.reason }
  if (!row.sessionId)
    return {
      code: await issueCodeWithSession(
        scope,
        row,
        sessionId,
        configs.map((c) => c.id),
        claims.claims,
        verifies,
      ),
    }
  const sealed = await withOfferClaims(scope, sessionId, claims.claims)
  if (!sealed) return { denied: 'the offer is no longer open' }
  return { code: await issueCode(scope, row, sessionId, sealed) }
}

/**
 * The offer's claims with this login's, sealed for the session. Kept with the request, not
 * written to the session: several wallets may log in on one offer, and only the one whose code
 * redeems the session has its holder's claims issued (grants/authorization-code.ts).
 */
async function withOfferClaims(
  scope: LoginScope,
  sessionId: string,
  claims: ClaimsByConfiguration,
): Promise<string | undefined> {
  const { deps, tenantId } = scope
  const session = await scope.sessions.get(sessionId)
  if (session?.status !== 'offered') return undefined
  const existing = offerClaims(deps.keys.sessionData, session)
  return deps.keys.sessionData.sealClaims(tenantId, sessionId, { ...existing, ...claims })
}

/** The code of a wallet-initiated flow, with the flow's own session holding the login's claims (sealed). */
async function issueCodeWithSession(
  scope: LoginScope,
  row: AuthorizationRequestRow,
  sessionId: string,
  credentialConfigurationIds: string[],
  claims: ClaimsByConfiguration,
  verifies: PresentationVerified | undefined,
): Promise<string> {
  const { deps, tenantId } = scope
  const code = newHandle()
  const now = deps.now().getTime()
  const { issued, verified } = await scope.requests.issueCodeWithSession(
    row.id,
    row.status,
    {
      codeHash: codeHash(code),
      expiresAt: new Date(now + CODE_SECONDS * 1000),
      ...(verifies ? { presentationSessionId: verifies.presentationSessionId, at: verifies.at } : {}),
    },
    {
      id: sessionId,
      credentialConfigurationIds,
      claimsEncrypted: deps.keys.sessionData.sealClaims(tenantId, sessionId, claims),
      // Never handed out: a wallet-initiated session redeems through its authorization code only.
      preAuthorizedCodeHash: codeHash(newHandle()),
      createdByClientId: `wallet:${row.clientId}`.slice(0, 200),
      expiresAt: new Date(now + SESSION_SECONDS * 1000),
    },
  )
  if (verifies && !verified) throw verifies.answered()
  if (!issued) throw new ProtocolError('invalid_request', 'this authorization request is no longer pending')
  return code
}
