import {
  authorizationRequestParams,
  type PresentationConfig,
  ProtocolError,
  RESPONSE_ENC_VALUES,
  type RequestObject,
  VP_FORMATS_SUPPORTED,
} from '@credential-service/core-domain'
import { traced } from '@credential-service/core-domain/tracing'
import { requestKeyReference, signRequestObject } from '@credential-service/crypto'
import {
  encryptionJwk,
  fetchOpenRequest,
  type PresentationDeps,
  requestDcqlQuery,
  verifierInfoOf,
  verifierResponseUri,
  verifierTrustChain,
} from '@credential-service/server-kit'

export interface VerifierDeps extends PresentationDeps {
  /** DC_API_SIGNED_CLIENT_ID_AUDIENCE: a signed DC API answer may also bind to the client id. */
  dcApiSignedClientIdAudience: boolean
}

export { RESPONSE_ENC_VALUES, VP_FORMATS_SUPPORTED }

/** `verifier_info` (OpenID4VP 1.0 §5.1), from the tenant's registration certificates read once per change. */
async function verifierInfo(deps: VerifierDeps, tenantId: string, config: PresentationConfig) {
  return verifierInfoOf(await deps.tenants.registrationCertificate(tenantId, config.id), config, deps.now())
}

/**
 * The signed request object (OpenID4VP §5, JAR RFC 9101): `typ` oauth-authz-req+jwt, `x5c`
 * without the trust anchor (HAIP), the request's nonce, state, DCQL query, response URI and
 * mode, client metadata with this request's encryption key, and the registration certificate as
 * `verifier_info` when there is one. `wallet_nonce` is echoed (§5.10).
 */
export const requestObject = traced('verifier request object', requestObjectUntraced)

async function requestObjectUntraced(
  deps: VerifierDeps,
  tenantId: string,
  requestId: string,
  walletNonce?: string,
): Promise<string> {
  const row = await fetchOpenRequest(deps, tenantId, requestId)
  if (!row) throw new ProtocolError('invalid_request', 'no open request with this id', { status: 404 })
  const config = await deps.tenants.presentationConfig(tenantId, row.presentationConfigId)
  if (!config)
    throw new ProtocolError('invalid_request', 'the presentation configuration is gone', { status: 404 })
  // OpenID4VP 1.0 §5.9.3 (V-07): a redirect_uri request cannot be signed; it went to the wallet
  // by value in the authorization request URI, so there is no request object to fetch.
  if (config.clientIdPrefix === 'redirect_uri' || row.clientId.startsWith('redirect_uri:'))
    throw new ProtocolError(
      'invalid_request',
      'this request uses the redirect_uri client identifier prefix and is passed by value',
      { status: 404 },
    )
  const signer = await deps.keys.signer(tenantId, config.keyChainId)
  const iat = Math.floor(deps.now().getTime() / 1000)
  const info = await verifierInfo(deps, tenantId, config)
  const claims: RequestObject = {
    aud: 'https://self-issued.me/v2',
    iat,
    exp: Math.floor(row.expiresAt.getTime() / 1000),
    ...authorizationRequestParams({
      clientId: row.clientId,
      responseMode: row.responseMode as RequestObject['response_mode'],
      responseUri: verifierResponseUri(deps.publicUrl, tenantId, requestId),
      nonce: row.nonce,
      state: row.state,
      dcqlQuery: await requestDcqlQuery(
        await deps.keys.keyChains(tenantId),
        config,
        await deps.tenants.trustLists(tenantId),
        deps.now(),
      ),
      encryptionJwk: encryptionJwk(deps, row) as Record<string, unknown>,
      transactionData: row.transactionData,
    }),
    ...(info ? { verifier_info: info } : {}),
    ...(walletNonce ? { wallet_nonce: walletNonce } : {}),
  }
  // verifier_attestation (§5.9.3, §12; V-08): the attestation in the JOSE header `jwt`, the
  // request signed by the key its cnf names (checked against the key chain at save and here).
  const attested = row.clientId.startsWith('verifier_attestation:')
  if (attested && !config.verifierAttestation)
    throw new ProtocolError('invalid_request', 'the configuration has no verifier attestation', {
      status: 404,
    })
  // openid_federation (§5.9.3): the verifier's trust chain, cached per process until its earliest exp.
  const trustChain =
    config.clientIdPrefix === 'openid_federation' ? await verifierTrustChain(deps, tenantId) : undefined
  return signRequestObject(
    signer,
    claims,
    requestKeyReference(config, { publicUrl: deps.publicUrl, tenantId, trustChain }),
  )
}
