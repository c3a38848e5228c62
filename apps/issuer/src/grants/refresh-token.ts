import type { RefreshTokenRequest } from '@credential-service/core-domain'
import { ProtocolError } from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import { grantOf, respondWithGrant, revokeGrant } from './authorized-grant'
import type { GrantContext } from './grant-context'
import type { TokenResponse } from './issue-access-token'
import { newRefreshToken, REFRESH_TOKEN_SECONDS } from './refresh-chain'
import { requireSenderConstraints } from './sender-constraints'

/**
 * Sessions a refresh serves. A completed session has nothing left to issue (its claims are gone),
 * so its refresh token is refused and the wallet knows to start a new authorization.
 */
const ISSUING = ['token_issued', 'credential_issued']
const SPENT = 'the refresh token is invalid, expired or already used'

const invalidGrant = (description: string) => new ProtocolError('invalid_grant', description)

/**
 * The refresh token grant: RFC 6749 §6 with one-time rotation (BCP 2.2.2, 4.14.2). Every check runs
 * before the token is spent, so a refused request leaves it usable; a token presented a second time
 * (replayed, or raced by a parallel request) revokes the grant, since we cannot tell which caller is
 * genuine.
 */
export async function refreshTokenGrant(
  request: RefreshTokenRequest,
  context: GrantContext,
): Promise<TokenResponse> {
  const { requests, sessions } = context
  // RFC 6749 §3.2.1: a public client names itself; an attested wallet by its attestation. The
  // grant of an anonymous pre-authorized wallet names no client ('').
  const clientId = request.client_id ?? context.walletClient?.clientId ?? ''
  const now = context.deps.now()
  const hash = codeHash(request.refresh_token)
  const row = await requests.byRefreshTokenHash(hash)
  if (!clientId && row && row.clientId !== '')
    throw new ProtocolError('invalid_request', 'client_id is required')
  if (row && row.refreshTokenHash !== hash) {
    await revokeGrant(context, row, 'a rotated refresh token of this session was used again', ISSUING)
    throw invalidGrant(SPENT)
  }
  if (row?.status !== 'redeemed' || !row.grantExpiresAt || row.expiresAt <= now) throw invalidGrant(SPENT)
  if (row.clientId !== clientId) throw invalidGrant('the refresh token was issued to another client')
  // RFC 9449 §5: every refresh proves the key the grant is bound to.
  if (row.dpopJkt && context.dpopJkt !== row.dpopJkt)
    throw new ProtocolError(
      'invalid_dpop_proof',
      context.dpopJkt
        ? 'the refresh token is bound to another DPoP key'
        : 'the refresh token is DPoP-bound; send a DPoP proof of its key',
    )
  const session = row.sessionId ? await sessions.get(row.sessionId) : undefined
  if (!session || !ISSUING.includes(session.status)) throw invalidGrant('the session of this grant has ended')
  // The configurations are known once the grant is read: their sender constraints are checked
  // here, before the token is spent.
  await requireSenderConstraints(context, async () => row.credentialConfigurationIds)
  const next = newRefreshToken()
  const expiresAt = Math.min(now.getTime() + REFRESH_TOKEN_SECONDS * 1000, row.grantExpiresAt.getTime())
  if (!(await requests.rotateRefreshToken(hash, codeHash(next), now, new Date(expiresAt)))) {
    // A parallel request spent the token since the read above: the same token twice.
    await revokeGrant(context, row, 'a refresh token of this session was used twice', ISSUING)
    throw invalidGrant(SPENT)
  }
  return respondWithGrant(context, grantOf(row, next))
}
