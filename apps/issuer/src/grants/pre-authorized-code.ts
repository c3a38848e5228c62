import type { PreAuthorizedCodeRequest } from '@credential-service/core-domain'
import { type CredentialConfig, ProtocolError } from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import type { IssuanceSessionRow } from '@credential-service/db-schema'
import { storeFailed } from '../services/failed-event'
import type { GrantContext } from './grant-context'
import { issueAccessToken, senderOf, type TokenResponse } from './issue-access-token'
import { startRefreshChain } from './refresh-chain'
import { refuseUnconstrained, unconstrainedConfigs } from './sender-constraints'

/** Guesses at an offer's transaction code before the offer is locked (OpenID4VCI 1.0 §13.6.3). */
export const TX_CODE_ATTEMPTS = 5
const TX_CODE_LOCKED = 'too many wrong transaction codes; the offer is locked'

/** The pre-authorized code grant (OpenID4VCI 1.0 §6.1). */
export async function preAuthorizedCodeGrant(
  request: PreAuthorizedCodeRequest,
  context: GrantContext,
): Promise<TokenResponse> {
  const { sessions, walletClient } = context
  const txCode = request.tx_code
  const now = context.deps.now()
  const hash = codeHash(request['pre-authorized_code'])
  // Configurations whose sender constraints this request lacks are left out of the one-statement
  // redemption; a code of such an offer is refused unspent, with the reason read on that path.
  const unconstrained = await unconstrainedConfigs(context)
  if (txCode && unconstrained.length > 0) {
    const offered = (await sessions.byCodeHash(hash))?.credentialConfigurationIds ?? []
    refuseUnconstrained(context, unconstrained, offered)
  }
  // An empty tx_code counts as none: RFC 6749 §3.2, a parameter without a value is omitted.
  const redeemed = txCode
    ? await redeemWithTxCode(context, hash, txCode, now)
    : ((await sessions.redeemByCode(
        hash,
        now,
        unconstrained.map((c) => c.id),
      )) ?? (await refuseRedemption(context, hash, false, now, unconstrained)))
  const refreshToken = await startRefreshChain(context, {
    sessionId: redeemed.id,
    configurationIds: redeemed.credentialConfigurationIds,
    clientId: request.client_id ?? walletClient?.clientId ?? '',
    dpopJkt: context.dpopJkt,
    attestedClientId: walletClient?.clientId,
  })
  return {
    ...(await issueAccessToken(context, {
      sessionId: redeemed.id,
      configurationIds: redeemed.credentialConfigurationIds,
      clientId: walletClient?.clientId ?? 'wallet',
      ...senderOf(context),
    })),
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
  }
}

/**
 * A token request with a transaction code (OpenID4VCI 1.0 §6.1, §13.6.3): one statement counts
 * the guess and judges it, so however many guesses arrive at once, at most TX_CODE_ATTEMPTS are
 * ever compared and the one that reaches the limit kills the code for every later caller.
 */
async function redeemWithTxCode(
  context: GrantContext,
  hash: string,
  txCode: string,
  now: Date,
): Promise<IssuanceSessionRow> {
  const row = await context.sessions.redeemWithTxCode(hash, codeHash(txCode), TX_CODE_ATTEMPTS, now)
  if (!row) return refuseRedemption(context, hash, true, now)
  if (row.status === 'token_issued') return row
  if (row.status !== 'failed') throw new ProtocolError('invalid_grant', 'the transaction code is wrong')
  // Only the guess that reached the limit gets the failed row back (later ones match nothing):
  // the lock is reported once, by this request.
  await storeFailed(
    context,
    { sessionId: row.id, configurationIds: row.credentialConfigurationIds },
    'tx_code_locked',
  )
  throw new ProtocolError('invalid_grant', TX_CODE_LOCKED)
}

/**
 * Why the one-statement redemption refused a token request (a read on the error path only):
 * S-33 asks for invalid_request when a tx_code is missing or sent to an offer without one, and
 * invalid_grant for a code that is unknown, used, expired or locked. `unconstrained` are the
 * configurations left out of the redemption for a sender constraint the request lacks (HAIP §4, §4.4.1).
 */
async function refuseRedemption(
  context: GrantContext,
  hash: string,
  txCodeSent: boolean,
  now: Date,
  unconstrained?: CredentialConfig[],
): Promise<never> {
  const row = await context.sessions.byCodeHash(hash)
  if (unconstrained && row) refuseUnconstrained(context, unconstrained, row.credentialConfigurationIds)
  if (row?.status === 'failed' && row.txCodeAttempts >= TX_CODE_ATTEMPTS) {
    throw new ProtocolError('invalid_grant', TX_CODE_LOCKED)
  }
  if (row?.status === 'offered' && row.expiresAt > now) {
    if (row.txCodeHash !== null && !txCodeSent)
      throw new ProtocolError('invalid_request', 'tx_code is required for this offer')
    if (row.txCodeHash === null && txCodeSent)
      throw new ProtocolError('invalid_request', 'this offer has no transaction code; send no tx_code')
  }
  throw new ProtocolError('invalid_grant', 'the pre-authorized code is invalid, expired or already used')
}
