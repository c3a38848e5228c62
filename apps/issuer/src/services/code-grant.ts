import { randomBytes, timingSafeEqual } from 'node:crypto'
import { ProtocolError } from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import {
  type AuthorizationRequestRow,
  createAuthorizationRequestRepository,
  createIssuanceSessionRepository,
} from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { AccessTokenGrant, TokenInput } from './token'

/** Lifetime of a refresh token; each use hands out the next one (BCP 2.2.2 rotation). */
export const REFRESH_TOKEN_SECONDS = 7 * 86_400
const ACTIVE = ['token_issued', 'credential_issued', 'completed']

const invalidGrant = (description: string) => new ProtocolError('invalid_grant', description)
const same = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

/** What the authorization code and refresh token grants add to the access token. */
export interface CodeGrant extends AccessTokenGrant {
  authorizationDetails?: Record<string, unknown>[]
  refreshToken?: string
}

/**
 * The authorization code grant (RFC 6749 §4.1.3, OpenID4VCI §6.1) and the refresh token grant
 * (RFC 6749 §6) of one tenant.
 */
export function createCodeGrants(deps: ProtocolDeps, tenantId: string) {
  const requests = createAuthorizationRequestRepository(deps.db, tenantId)
  const sessions = createIssuanceSessionRepository(deps.db, tenantId)

  /** OpenID4VCI §6.2: one credential identifier per configuration asked for by authorization_details. */
  function grantOf(row: AuthorizationRequestRow, refreshToken: string | undefined): CodeGrant {
    const details = row.detailConfigurationIds
    return {
      sessionId: row.sessionId as string,
      configurationIds: row.credentialConfigurationIds,
      clientId: row.clientId,
      ...(details.length
        ? {
            // The configuration id is the identifier: stable across refreshes, one credential each.
            credentialIdentifiers: Object.fromEntries(details.map((id) => [id, id])),
            authorizationDetails: details.map((id) => ({
              type: 'openid_credential',
              credential_configuration_id: id,
              credential_identifiers: [id],
            })),
          }
        : {}),
      ...(refreshToken ? { refreshToken } : {}),
    }
  }

  async function wantsRefreshTokens(row: AuthorizationRequestRow): Promise<boolean> {
    const configs = await deps.tenants.credentialConfigs(tenantId)
    return configs.some((c) => row.credentialConfigurationIds.includes(c.id) && c.refreshTokens)
  }

  /** BCP 4.5 (S-35): a code presented twice revokes its grant, and the session's tokens with it. */
  async function revoke(row: AuthorizationRequestRow, reason: string) {
    await requests.revoke(row.id)
    if (row.sessionId) await sessions.fail(row.sessionId, reason)
  }

  async function authorizationCode(input: TokenInput): Promise<CodeGrant> {
    const { authorizationCode: code, redirectUri, codeVerifier } = input
    // RFC 6749 §4.1.3: client_id is required only of a client that does not authenticate; an
    // attested wallet is identified by its attestation's sub (oid4vc-ts sends no client_id then).
    const clientId = input.clientId ?? input.walletClient?.clientId
    if (!code) throw new ProtocolError('invalid_request', 'code is required')
    if (!redirectUri) throw new ProtocolError('invalid_request', 'redirect_uri is required')
    if (!clientId) throw new ProtocolError('invalid_request', 'client_id is required')
    if (!codeVerifier) throw new ProtocolError('invalid_request', 'code_verifier is required (PKCE)')
    const now = deps.now()
    const hash = codeHash(code)
    const row = await requests.redeemCode(hash, now)
    if (!row) {
      const known = await requests.byCodeHash(hash)
      if (known && ['redeemed', 'revoked'].includes(known.status))
        await revoke(known, 'an authorization code of this session was used twice')
      throw invalidGrant('the authorization code is invalid, expired or already used')
    }
    // RFC 6749 §4.1.3 and RFC 7636 §4.6: the code is bound to the client, the redirect_uri and
    // the PKCE challenge; a failed check uses the code up, so it cannot be retried.
    if (row.clientId !== clientId) throw invalidGrant('the authorization code was issued to another client')
    if (row.redirectUri !== redirectUri)
      throw invalidGrant('redirect_uri differs from the authorization request')
    if (!/^[A-Za-z0-9._~-]{43,128}$/.test(codeVerifier) || !same(codeHash(codeVerifier), row.codeChallenge))
      throw invalidGrant('the PKCE code_verifier does not match the code_challenge')
    // DPoP §10: a dpop_jkt pushed with the request binds the code to that key.
    if (row.dpopJkt && input.dpopJkt !== row.dpopJkt)
      throw new ProtocolError('invalid_dpop_proof', 'the code is bound to another DPoP key')
    // ABCA §5, HAIP 4.3 (I-48): a code pushed by an attested client is redeemed by that client, attested.
    if (row.attestedClientId && input.walletClient?.clientId !== row.attestedClientId)
      throw new ProtocolError('invalid_client', 'the code was pushed by an attested client', {
        status: 401,
      })
    // The claims of this request's holder login go into the session with the redemption.
    if (!row.sessionId || !(await sessions.redeemAuthorized(row.sessionId, now, row.loginClaimsEncrypted)))
      throw invalidGrant('the offer of this authorization is no longer open')
    let refreshToken: string | undefined
    if (await wantsRefreshTokens(row)) refreshToken = randomBytes(32).toString('base64url')
    await requests.setRefreshToken(
      row.id,
      refreshToken ? codeHash(refreshToken) : null,
      new Date(now.getTime() + REFRESH_TOKEN_SECONDS * 1000),
    )
    return grantOf(row, refreshToken)
  }

  /** RFC 6749 §6 with one-time rotation (BCP 2.2.2): the old token dies with the answer. */
  async function refresh(input: TokenInput): Promise<CodeGrant> {
    if (!input.refreshToken) throw new ProtocolError('invalid_request', 'refresh_token is required')
    const now = deps.now()
    const next = randomBytes(32).toString('base64url')
    const row = await requests.rotateRefreshToken(
      codeHash(input.refreshToken),
      codeHash(next),
      now,
      new Date(now.getTime() + REFRESH_TOKEN_SECONDS * 1000),
    )
    if (!row) throw invalidGrant('the refresh token is invalid, expired or already used')
    if (input.clientId && input.clientId !== row.clientId)
      throw invalidGrant('the refresh token was issued to another client')
    if (row.dpopJkt && input.dpopJkt !== row.dpopJkt)
      throw new ProtocolError('invalid_dpop_proof', 'the refresh token is bound to another DPoP key')
    const session = row.sessionId ? await sessions.get(row.sessionId) : undefined
    if (!session || !ACTIVE.includes(session.status))
      throw invalidGrant('the session of this grant has ended')
    return grantOf(row, next)
  }

  return {
    /** The configurations an authorization code was issued for (none when unknown); spends nothing. */
    configurationIdsOf: async (code: string) =>
      (await requests.byCodeHash(codeHash(code)))?.credentialConfigurationIds ?? [],
    token: (input: TokenInput) =>
      input.grantType === 'refresh_token' ? refresh(input) : authorizationCode(input),
  }
}
