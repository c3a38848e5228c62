import { timingSafeEqual } from 'node:crypto'
import type { AuthorizationCodeRequest } from '@credential-service/core-domain'
import { ProtocolError } from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import { grantOf, respondWithGrant, revokeGrant } from './authorized-grant'
import type { GrantContext } from './grant-context'
import type { TokenResponse } from './issue-access-token'
import {
  newRefreshToken,
  REFRESH_GRANT_SECONDS,
  REFRESH_TOKEN_SECONDS,
  refreshTokenConfigurations,
} from './refresh-chain'
import { requireSenderConstraints } from './sender-constraints'

const invalidGrant = (description: string) => new ProtocolError('invalid_grant', description)
const same = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

/** The authorization code grant (RFC 6749 §4.1.3, RFC 7636 §4.5, OpenID4VCI 1.0 §6.1). */
export async function authorizationCodeGrant(
  request: AuthorizationCodeRequest,
  context: GrantContext,
): Promise<TokenResponse> {
  const { code, redirect_uri: redirectUri, code_verifier: codeVerifier } = request
  const { requests } = context
  const hash = codeHash(code)
  // Before the code is spent, as for a pre-authorized code: a refused wallet retries with it, and
  // the session does not read token_issued for a token never issued.
  let known: Awaited<ReturnType<typeof requests.byCodeHash>> | null = null
  const knownRow = async () => {
    known ??= (await requests.byCodeHash(hash)) ?? null
    return known
  }
  await requireSenderConstraints(context, async () => (await knownRow())?.credentialConfigurationIds ?? [])
  // RFC 6749 §4.1.3: client_id is required only of a client that does not authenticate; an
  // attested wallet is identified by its attestation's sub (oid4vc-ts sends no client_id then).
  const clientId = request.client_id ?? context.walletClient?.clientId
  if (!clientId) throw new ProtocolError('invalid_request', 'client_id is required')
  if (!codeVerifier) throw new ProtocolError('invalid_request', 'code_verifier is required (PKCE)')
  const now = context.deps.now()
  // One statement spends the code and, when every binding below holds, issues its session's token
  // and starts the refresh token chain (a token computed here, kept only if a configuration wants one).
  const refreshToken = newRefreshToken()
  const wellFormed = /^[A-Za-z0-9._~-]{43,128}$/.test(codeVerifier)
  const row = await requests.redeemCodeGrant(
    hash,
    now,
    {
      redirectUri: redirectUri || undefined,
      clientId,
      codeChallenge: wellFormed ? codeHash(codeVerifier) : null,
      dpopJkt: context.dpopJkt ?? null,
      attestedClientId: context.walletClient?.clientId ?? null,
    },
    {
      refreshing: await refreshTokenConfigurations(context),
      refreshTokenHash: codeHash(refreshToken),
      expiresAt: new Date(now.getTime() + REFRESH_TOKEN_SECONDS * 1000),
      grantExpiresAt: new Date(now.getTime() + REFRESH_GRANT_SECONDS * 1000),
    },
  )
  if (!row) {
    const known = await requests.byCodeHash(hash)
    // RFC 6749 §4.1.3: redirect_uri is required when the authorization request had one; an
    // Interactive Authorization request (OpenID4VCI 1.1, FiPA -03) may have none (stored as ''). The
    // code was left unspent: the wallet may retry with it.
    if (!redirectUri && known?.status === 'code_issued' && known.redirectUri !== '')
      throw new ProtocolError('invalid_request', 'redirect_uri is required')
    if (known && ['redeemed', 'revoked'].includes(known.status))
      await revokeGrant(context, known, 'an authorization code of this session was used twice')
    throw invalidGrant('the authorization code is invalid, expired or already used')
  }
  // RFC 6749 §4.1.3 and RFC 7636 §4.6: the code is bound to the client, the redirect_uri and
  // the PKCE challenge; a failed check uses the code up, so it cannot be retried. The statement
  // checked the same: these name the failure.
  if (row.clientId !== clientId) throw invalidGrant('the authorization code was issued to another client')
  if (row.redirectUri !== (redirectUri ?? ''))
    throw invalidGrant('redirect_uri differs from the authorization request')
  if (!wellFormed || !same(codeHash(codeVerifier), row.codeChallenge))
    throw invalidGrant('the PKCE code_verifier does not match the code_challenge')
  // DPoP §10: a dpop_jkt pushed with the request binds the code to that key.
  if (row.dpopJkt && context.dpopJkt !== row.dpopJkt)
    throw new ProtocolError('invalid_dpop_proof', 'the code is bound to another DPoP key')
  // ABCA §5, HAIP 4.3 (I-48): a code pushed by an attested client is redeemed by that client, attested.
  if (row.attestedClientId && context.walletClient?.clientId !== row.attestedClientId)
    throw new ProtocolError('invalid_client', 'the code was pushed by an attested client', {
      status: 401,
    })
  // The claims of this request's holder login went into the session with the redemption.
  if (!row.authorized) throw invalidGrant('the offer of this authorization is no longer open')
  const refreshed = row.refreshTokenHash === codeHash(refreshToken)
  return respondWithGrant(context, grantOf(row, refreshed ? refreshToken : undefined))
}
