import { newId, type ParRequest, ProtocolError, REQUEST_URI_PREFIX } from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import { type NewAuthorizationRequest, sessionByIssuerState } from '@credential-service/db-schema'
import type { WalletClient } from '../services/client-attestation'
import { type LoginScope, newHandle } from './login-scope'
import { checkRequested, pushedRequestOf } from './pushed-request'

/** PAR §2.2: short-lived; long enough for the wallet to open the browser. */
export const REQUEST_URI_SECONDS = 60

/** What authenticated the pushed request besides its parameters. */
export interface PushSender {
  /** JWK thumbprint of a verified DPoP header. */
  dpopJkt?: string | undefined
  walletClient?: WalletClient | undefined
}

/** Pushed authorization request endpoint (RFC 9126 §2): the answer of a stored request. */
export async function pushAuthorizationRequest(scope: LoginScope, request: ParRequest, sender: PushSender) {
  const { requestUri } = await storePushedRequest(scope, request, sender)
  return { request_uri: `${REQUEST_URI_PREFIX}${requestUri}`, expires_in: REQUEST_URI_SECONDS }
}

/**
 * Stores a pushed request (PAR): its row, the request_uri handle (without its prefix) and the
 * configurations requested.
 */
export async function storePushedRequest(scope: LoginScope, request: ParRequest, sender: PushSender = {}) {
  const pushed = await pushedRequestRow(scope, request, sender)
  return { ...pushed, row: await scope.requests.insert(pushed.row) }
}

/**
 * A pushed request checked (PAR, or the parameters of an Interactive Authorization Initial
 * Request), not stored yet: its row, the request_uri handle (without its prefix) and the
 * configurations requested.
 */
export async function pushedRequestRow(scope: LoginScope, request: ParRequest, sender: PushSender = {}) {
  const { deps, tenantId } = scope
  const configs = await deps.tenants.credentialConfigs(tenantId)
  const pushed = pushedRequestOf(request, configs)
  const { dpopJkt, walletClient } = sender
  if (dpopJkt && pushed.dpopJkt && dpopJkt !== pushed.dpopJkt)
    throw new ProtocolError('invalid_dpop_proof', 'dpop_jkt does not match the DPoP proof key')
  const now = deps.now()
  // I-25, S-39: an unknown or forged issuer_state grants nothing and is ignored.
  const offer = pushed.issuerState
    ? await sessionByIssuerState(deps.db, tenantId, codeHash(pushed.issuerState), now)
    : undefined
  let requested = [...new Set([...pushed.detailConfigurationIds, ...pushed.scopeConfigurationIds])]
  if (offer) {
    requested = requested.length
      ? requested.filter((id) => offer.credentialConfigurationIds.includes(id))
      : offer.credentialConfigurationIds
  }
  if (requested.length === 0)
    throw new ProtocolError('invalid_scope', 'no credential configuration of this issuer was requested')
  checkRequested(
    configs.filter((c) => requested.includes(c.id)),
    { offered: offer !== undefined, attested: walletClient !== undefined },
  )
  const requestUri = newHandle()
  const id = newId('par')
  const row: NewAuthorizationRequest = {
    id,
    requestUriHash: codeHash(requestUri),
    clientId: pushed.clientId,
    redirectUri: pushed.redirectUri,
    codeChallenge: pushed.codeChallenge,
    state: pushed.state ?? null,
    credentialConfigurationIds: requested,
    detailConfigurationIds: pushed.detailConfigurationIds.filter((id) => requested.includes(id)),
    sessionId: offer?.id ?? null,
    dpopJkt: dpopJkt ?? pushed.dpopJkt ?? null,
    attestedClientId: walletClient?.clientId ?? null,
    attestationJkt: walletClient?.instanceJkt ?? null,
    expiresAt: new Date(now.getTime() + REQUEST_URI_SECONDS * 1000),
  }
  return { row, requestUri, requested: configs.filter((c) => requested.includes(c.id)) }
}
