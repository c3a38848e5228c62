import { randomBytes, timingSafeEqual } from 'node:crypto'
import { newId, ProtocolError } from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import {
  type AuthorizationRequestRow,
  createAuthorizationRequestRepository,
  createIssuanceSessionRepository,
} from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { AccessTokenGrant, TokenInput } from './token'

/** Lifetime of an unused refresh token; each use hands out the next one (BCP 2.2.2 rotation). */
export const REFRESH_TOKEN_SECONDS = 7 * 86_400
/**
 * Absolute lifetime of a grant's refresh token chain, from the code redemption (BCP 4.14.2): enough
 * for a long deferred issuance, and a stolen chain cannot be kept alive by rotating it.
 */
export const REFRESH_GRANT_SECONDS = 30 * 86_400
/**
 * Sessions a refresh serves. A completed session has nothing left to issue (its claims are gone),
 * so its refresh token is refused and the wallet knows to start a new authorization.
 */
const ISSUING = ['token_issued', 'credential_issued']
const SPENT = 'the refresh token is invalid, expired or already used'

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
      // An anonymous pre-authorized wallet's tokens name 'wallet', as its first access token did.
      clientId: row.clientId || 'wallet',
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

  async function wantsRefreshTokens(configurationIds: string[]): Promise<boolean> {
    const configs = await deps.tenants.credentialConfigs(tenantId)
    return configs.some((c) => configurationIds.includes(c.id) && c.refreshTokens)
  }

  /**
   * BCP 4.5, 4.14.2 (S-35): a code or refresh token presented twice revokes its grant, and the
   * session's tokens with it; `from` limits which session statuses fail.
   */
  async function revoke(row: AuthorizationRequestRow, reason: string, from?: string[]) {
    await requests.revoke(row.id)
    if (row.sessionId) await sessions.fail(row.sessionId, reason, from)
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
    if (await wantsRefreshTokens(row.credentialConfigurationIds))
      refreshToken = randomBytes(32).toString('base64url')
    await requests.setRefreshToken(row.id, {
      refreshTokenHash: refreshToken ? codeHash(refreshToken) : null,
      // RFC 9449 §5: a public client's refresh token is bound to the DPoP key used here.
      dpopJkt: row.dpopJkt ?? input.dpopJkt ?? null,
      expiresAt: new Date(now.getTime() + REFRESH_TOKEN_SECONDS * 1000),
      grantExpiresAt: new Date(now.getTime() + REFRESH_GRANT_SECONDS * 1000),
    })
    return grantOf(row, refreshToken)
  }

  /**
   * RFC 6749 §6 with one-time rotation (BCP 2.2.2, 4.14.2). Every check runs before the token is
   * spent, so a refused request leaves it usable; a token presented a second time (replayed, or
   * raced by a parallel request) revokes the grant, since we cannot tell which caller is genuine.
   * `requireSender` checks the configurations' sender constraints (DPoP, wallet attestation).
   */
  async function refresh(
    input: TokenInput,
    requireSender: (configurationIds: string[]) => Promise<void>,
  ): Promise<CodeGrant> {
    // RFC 6749 §3.2.1: a public client names itself; an attested wallet by its attestation. The
    // grant of an anonymous pre-authorized wallet names no client ('').
    const clientId = input.clientId ?? input.walletClient?.clientId ?? ''
    if (!input.refreshToken) throw new ProtocolError('invalid_request', 'refresh_token is required')
    const now = deps.now()
    const hash = codeHash(input.refreshToken)
    const row = await requests.byRefreshTokenHash(hash)
    if (!clientId && row && row.clientId !== '')
      throw new ProtocolError('invalid_request', 'client_id is required')
    if (row && row.refreshTokenHash !== hash) {
      await revoke(row, 'a rotated refresh token of this session was used again', ISSUING)
      throw invalidGrant(SPENT)
    }
    if (row?.status !== 'redeemed' || !row.grantExpiresAt || row.expiresAt <= now) throw invalidGrant(SPENT)
    if (row.clientId !== clientId) throw invalidGrant('the refresh token was issued to another client')
    // RFC 9449 §5: every refresh proves the key the grant is bound to.
    if (row.dpopJkt && input.dpopJkt !== row.dpopJkt)
      throw new ProtocolError(
        'invalid_dpop_proof',
        input.dpopJkt
          ? 'the refresh token is bound to another DPoP key'
          : 'the refresh token is DPoP-bound; send a DPoP proof of its key',
      )
    const session = row.sessionId ? await sessions.get(row.sessionId) : undefined
    if (!session || !ISSUING.includes(session.status))
      throw invalidGrant('the session of this grant has ended')
    await requireSender(row.credentialConfigurationIds)
    const next = randomBytes(32).toString('base64url')
    const expiresAt = Math.min(now.getTime() + REFRESH_TOKEN_SECONDS * 1000, row.grantExpiresAt.getTime())
    if (!(await requests.rotateRefreshToken(hash, codeHash(next), now, new Date(expiresAt)))) {
      // A parallel request spent the token since the read above: the same token twice.
      await revoke(row, 'a refresh token of this session was used twice', ISSUING)
      throw invalidGrant(SPENT)
    }
    return grantOf(row, next)
  }

  /**
   * OpenID4VCI §6.2 for the pre-authorized code grant: when an offered configuration has
   * `refreshTokens`, the redeemed code starts a refresh token chain as a code does (same rotation,
   * reuse revocation, DPoP binding and lifetimes), so a wallet can keep polling a deferred
   * credential beyond its access token. Undefined when no configuration wants one.
   */
  async function preAuthorizedRefreshToken(grant: {
    sessionId: string
    configurationIds: string[]
    clientId: string
    dpopJkt: string | undefined
    attestedClientId: string | undefined
  }): Promise<string | undefined> {
    if (!(await wantsRefreshTokens(grant.configurationIds))) return undefined
    const refreshToken = randomBytes(32).toString('base64url')
    const now = deps.now().getTime()
    await requests.insertGrant({
      id: newId('grt'),
      requestUriHash: codeHash(randomBytes(32).toString('base64url')),
      clientId: grant.clientId,
      redirectUri: '',
      codeChallenge: '',
      credentialConfigurationIds: grant.configurationIds,
      detailConfigurationIds: [],
      sessionId: grant.sessionId,
      dpopJkt: grant.dpopJkt ?? null,
      attestedClientId: grant.attestedClientId ?? null,
      refreshTokenHash: codeHash(refreshToken),
      expiresAt: new Date(now + REFRESH_TOKEN_SECONDS * 1000),
      grantExpiresAt: new Date(now + REFRESH_GRANT_SECONDS * 1000),
    })
    return refreshToken
  }

  return {
    preAuthorizedRefreshToken,
    /** The configurations an authorization code was issued for (none when unknown); spends nothing. */
    configurationIdsOf: async (code: string) =>
      (await requests.byCodeHash(codeHash(code)))?.credentialConfigurationIds ?? [],
    token: (input: TokenInput, requireSender: (configurationIds: string[]) => Promise<void>) =>
      input.grantType === 'refresh_token' ? refresh(input, requireSender) : authorizationCode(input),
  }
}
