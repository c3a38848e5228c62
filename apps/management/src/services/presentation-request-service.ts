import { createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto'
import {
  authorizationRequestByValue,
  authorizationRequestParams,
  checkRedirectUri,
  type DcApiProtocol,
  dcApiProtocols,
  dcApiRequestParams,
  dcApiResponseMode,
  ForbiddenError,
  isOperator,
  newId,
  type OutboundUrlPolicy,
  originIssue,
  type PresentationConfig,
  type PresentationRequestCreate,
  type PresentationRequestCreated,
  type PresentationSession,
  type Principal,
  RuleViolationError,
  type ValidationIssue,
  verifierDid,
} from '@credential-service/core-domain'
import {
  annexCRequest,
  type JwkCipher,
  type PresentationResult,
  requestKeyReference,
  signRequestObject,
  verifierAttestationIssues,
  verifierClientId,
} from '@credential-service/crypto'
import {
  createPresentationSessionRepository,
  createWebhookEndpointRepository,
  type Database,
  type PresentationSessionRow,
} from '@credential-service/db-schema'

import {
  type FlowMetrics,
  type KeyRuntime,
  requestDcqlQuery,
  type TenantCache,
} from '@credential-service/server-kit'
import { rememberSessionKind } from './session-kinds'

export interface PresentationRequestDeps {
  db: Database
  cipher: JwkCipher
  keys: KeyRuntime
  tenants: TenantCache
  publicUrl: string
  metrics: FlowMetrics
  now: () => Date
  /** OUTBOUND_ALLOW_HTTP decides whether an http redirect URI is accepted. */
  outbound: OutboundUrlPolicy
}

/**
 * The session as the API shows it. `claims` are the decrypted result for single-session reads
 * (null in lists); never shown for a same-device session: those are released by the response code
 * alone (OpenID4VP §14.3).
 */
export function toPresentationSession(
  row: PresentationSessionRow,
  now: Date,
  claims: PresentationResult | null,
): PresentationSession {
  const iso = (d: Date | null) => d?.toISOString() ?? null
  const responseCodeRequired = row.responseCodeHash !== null
  return {
    id: row.id,
    kind: 'presentation',
    status: (row.status === 'pending' && row.expiresAt <= now
      ? 'expired'
      : row.status) as PresentationSession['status'],
    presentationConfigId: row.presentationConfigId,
    failureReason: row.failureReason,
    claims: responseCodeRequired ? null : claims,
    responseCodeRequired,
    delivery: {
      status: row.deliveryStatus as PresentationSession['delivery']['status'],
      attempts: row.deliveryAttempts,
      error: row.deliveryError,
    },
    createdByClientId: row.createdByClientId,
    expiresAt: row.expiresAt.toISOString(),
    requestFetchedAt: iso(row.requestFetchedAt),
    responseReceivedAt: iso(row.responseReceivedAt),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

/**
 * OpenID4VP authorization requests (§5) of one tenant: a session with a fresh nonce, state,
 * request id and response encryption key, and the `openid4vp://` URI that points to the request.
 */
export function createPresentationRequestService(
  deps: PresentationRequestDeps,
  tenantId: string,
  actor: Principal,
) {
  const sessions = createPresentationSessionRepository(deps.db, tenantId)

  return {
    async create(input: PresentationRequestCreate): Promise<PresentationRequestCreated> {
      const config = await deps.tenants.presentationConfig(tenantId, input.presentationConfigId)
      if (!config) {
        const message = `no presentation configuration '${input.presentationConfigId}'`
        throw new RuleViolationError(message, [{ path: 'body.presentationConfigId', message }])
      }
      if (!isOperator(actor)) {
        const allowed = (await deps.tenants.client(tenantId, actor.clientId))?.allowedPresentationConfigs
        if (allowed?.length && !allowed.includes(config.id))
          throw new ForbiddenError(`this client may not request '${config.id}'`)
      }
      // Transaction data hashes are defined for SD-JWT VC key binding here; mdoc device-signed
      // hashes are not verified, so such a request is refused rather than half-checked.
      const mdocIds = new Set(
        config.dcqlQuery.credentials.filter((c) => c.format === 'mso_mdoc').map((c) => c.id),
      )
      const onMdoc =
        input.transactionData?.flatMap((entry) => entry.credential_ids.filter((id) => mdocIds.has(id))) ?? []
      if (onMdoc.length) {
        const message = `transaction data for mso_mdoc credentials is not supported: ${onMdoc.join(', ')}`
        throw new RuleViolationError(message, [{ path: 'body.transactionData', message }])
      }
      const types = input.transactionData?.map((entry) => entry.type) ?? []
      const refused = types.filter((type) => !config.transactionDataTypes?.includes(type))
      if (refused.length) {
        const message = `transaction data types not allowed by the configuration: ${refused.join(', ')}`
        throw new RuleViolationError(message, [{ path: 'body.transactionData', message }])
      }
      // The wallet opens the redirect URI in the user's browser: https only, also for a
      // configuration saved before that rule (a stored `javascript:` URI never reaches a wallet).
      const redirectUri = input.redirectUri ?? config.redirectUri
      if (redirectUri !== undefined) {
        const path = input.redirectUri === undefined ? 'body.presentationConfigId' : 'body.redirectUri'
        const issues = checkRedirectUri(redirectUri, deps.outbound, path)
        if (issues.length) throw new RuleViolationError('the redirect URI is not allowed; see errors', issues)
      }
      const dcApi = input.transport === 'dc-api' ? dcApiTransport(deps, config, input) : undefined
      // An override must name an endpoint of this tenant (checklist S-105); another tenant's id
      // reads as missing.
      if (
        input.webhookEndpointId !== undefined &&
        !(await createWebhookEndpointRepository(deps.db, tenantId).row(input.webhookEndpointId))
      ) {
        const message = `no webhookEndpoint '${input.webhookEndpointId}' in this tenant`
        throw new RuleViolationError(message, [{ path: 'body.webhookEndpointId', message }])
      }
      const requestId = randomBytes(24).toString('base64url')
      const responseUri = `${deps.publicUrl}/verifiers/${tenantId}/responses/${requestId}`
      const clientId = await requestClientId(deps, tenantId, config, responseUri)

      // A fresh ECDH-ES key per request (HAIP 5): a response can only be read by its own request.
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      const id = newId('ses')
      const now = deps.now()
      const expiresAt = new Date(now.getTime() + (input.lifetimeSeconds ?? config.lifetimeSeconds) * 1000)
      const nonce = randomBytes(32).toString('base64url')
      const state = randomBytes(32).toString('base64url')
      const responseMode = input.responseMode ?? config.responseMode
      const transactionData =
        input.transactionData?.map((entry) => Buffer.from(JSON.stringify(entry)).toString('base64url')) ??
        null
      const encryptionKid = randomBytes(12).toString('base64url')
      await sessions.insert({
        id,
        requestId,
        status: 'pending',
        presentationConfigId: config.id,
        clientId,
        nonce,
        state,
        responseMode,
        redirectUri: redirectUri ?? null,
        origin: dcApi?.origin ?? null,
        dcApiProtocols: dcApi?.protocols ?? null,
        transactionData,
        webhookEndpointId: input.webhookEndpointId ?? config.webhookEndpointId ?? null,
        encryptionKey: deps.cipher.encrypt(
          privateKey.export({ format: 'jwk' }) as Record<string, unknown>,
          `presentation:${tenantId}/${id}`,
        ),
        encryptionKid,
        createdByClientId: actor.clientId,
        expiresAt,
      })
      const encryptionJwk = {
        ...(createPublicKey(privateKey).export({ format: 'jwk' }) as Record<string, unknown>),
        kid: encryptionKid,
        alg: 'ECDH-ES',
        use: 'enc',
      }
      const byValue = config.clientIdPrefix === 'redirect_uri'
      const requestUri = byValue ? null : `${deps.publicUrl}/verifiers/${tenantId}/requests/${requestId}`
      // OpenID4VP 1.0 §5.9.3 (V-07): a redirect_uri request cannot be signed, so it goes by value,
      // every parameter in the URI; the others are signed request objects by reference (HAIP 5).
      const authorizationRequestUri = requestUri
        ? `openid4vp://?${new URLSearchParams({ client_id: clientId, request_uri: requestUri, request_uri_method: 'post' })}`
        : authorizationRequestByValue(
            authorizationRequestParams({
              clientId,
              responseMode,
              responseUri,
              nonce,
              state,
              dcqlQuery: await requestDcqlQuery(
                await deps.keys.keyChains(tenantId),
                config,
                await deps.tenants.trustLists(tenantId),
                deps.now(),
              ),
              encryptionJwk,
              transactionData,
            }),
          )
      deps.metrics.presentationRequested(tenantId)
      rememberSessionKind(tenantId, id, 'presentation')
      return {
        sessionId: id,
        clientId,
        requestUri,
        requestUriMethod: requestUri ? 'post' : null,
        authorizationRequestUri,
        ...(dcApi
          ? {
              dcApi: {
                requests: await dcApiRequests(deps, tenantId, config, {
                  ...dcApi,
                  clientId,
                  responseMode: dcApiResponseMode(responseMode),
                  nonce,
                  encryptionJwk,
                  transactionData,
                  expiresAt,
                }),
                responseUri: `${deps.publicUrl}/verifiers/${tenantId}/dc-api/${requestId}`,
              },
            }
          : {}),
        expiresAt: expiresAt.toISOString(),
      }
    },
  }
}

/**
 * A `dc-api` request's origin and protocols (OpenID4VP 1.0 Appendix A, ISO/IEC 18013-7 Annex C):
 * the origin must be one the configuration allows, and a same-device redirect has no place in it
 * (the browser hands the answer back to the page).
 */
function dcApiTransport(
  deps: PresentationRequestDeps,
  config: PresentationConfig,
  input: PresentationRequestCreate,
): { origin: string; protocols: DcApiProtocol[] } {
  const origin = input.origin as string
  const issues: ValidationIssue[] = []
  const originProblem = originIssue(origin, deps.outbound)
  if (originProblem) issues.push({ path: 'body.origin', message: originProblem })
  const allowed = config.dcApi?.origins
  if (allowed && !allowed.includes(origin))
    issues.push({
      path: 'body.origin',
      message: `'${origin}' is not among the configuration's dcApi.origins (${allowed.join(', ')})`,
    })
  if (input.redirectUri !== undefined)
    issues.push({
      path: 'body.redirectUri',
      message: 'a dc-api request returns to the page that made it; a redirect URI has no use',
    })
  const protocols = dcApiProtocols(config)
  if (protocols.length === 0)
    issues.push({
      path: 'body.presentationConfigId',
      message: 'the configuration fits no Digital Credentials API protocol',
    })
  if (issues.length) throw new RuleViolationError('the dc-api request is not possible; see errors', issues)
  return { origin, protocols }
}

/**
 * The `requests` for `navigator.credentials.get`, one per protocol in the configuration's order:
 * OpenID4VP unsigned (parameters as they are) and signed (a request object with `client_id` and
 * `expected_origins`, A.3.2), and the Annex C DeviceRequest with this request's encryption key.
 */
async function dcApiRequests(
  deps: PresentationRequestDeps,
  tenantId: string,
  config: PresentationConfig,
  request: {
    origin: string
    protocols: DcApiProtocol[]
    clientId: string
    responseMode: 'dc_api' | 'dc_api.jwt'
    nonce: string
    encryptionJwk: Record<string, unknown>
    transactionData: string[] | null
    expiresAt: Date
  },
): Promise<{ protocol: DcApiProtocol; data: Record<string, unknown> }[]> {
  const params = dcApiRequestParams({
    ...request,
    dcqlQuery: await requestDcqlQuery(
      await deps.keys.keyChains(tenantId),
      config,
      await deps.tenants.trustLists(tenantId),
      deps.now(),
    ),
  })
  const requests: { protocol: DcApiProtocol; data: Record<string, unknown> }[] = []
  for (const protocol of request.protocols) {
    if (protocol === 'openid4vp-v1-unsigned') requests.push({ protocol, data: params })
    if (protocol === 'openid4vp-v1-signed') {
      const signer = await deps.keys.signer(tenantId, config.keyChainId)
      const iat = Math.floor(deps.now().getTime() / 1000)
      const claims = {
        aud: 'https://self-issued.me/v2',
        iat,
        exp: Math.floor(request.expiresAt.getTime() / 1000),
        client_id: request.clientId,
        expected_origins: [request.origin],
        ...params,
      }
      const key = requestKeyReference(config, { publicUrl: deps.publicUrl, tenantId })
      requests.push({ protocol, data: { request: await signRequestObject(signer, claims, key) } })
    }
    if (protocol === 'org-iso-mdoc') {
      // The request's own nonce and encryption key: HPKE's recipient is the key direct_post.jwt uses.
      const { kid: _kid, alg: _alg, use: _use, ...recipientJwk } = request.encryptionJwk
      const data = await annexCRequest({
        credential: config.dcqlQuery.credentials[0] as PresentationConfig['dcqlQuery']['credentials'][number],
        nonce: Buffer.from(request.nonce, 'base64url'),
        recipientJwk,
      })
      requests.push({ protocol, data: { ...data } })
    }
  }
  return requests
}

/** The tenant's verifier identifier: what a Verifier Attestation's `sub` must be (OpenID4VP 1.0 §12). */
export const verifierIdentifierOf = (publicUrl: string, tenantId: string) =>
  `${publicUrl}/verifiers/${tenantId}`

/**
 * The full client identifier of a new request (OpenID4VP 1.0 §5.9.3): from the signing
 * certificate for the x509 prefixes, the response URI for `redirect_uri` (with direct_post the
 * client id must equal it), the attestation's `sub` for `verifier_attestation`, whose attestation is
 * checked again here: a key chain rotated or an attestation expired since the save would make every
 * wallet refuse the request.
 */
async function requestClientId(
  deps: PresentationRequestDeps,
  tenantId: string,
  config: PresentationConfig,
  responseUri: string,
): Promise<string> {
  if (config.clientIdPrefix === 'redirect_uri') return `redirect_uri:${responseUri}`
  // did:web of the verifier, whose DID document lists the tenant's key chain keys (did-document.ts).
  if (config.clientIdPrefix === 'decentralized_identifier')
    return `decentralized_identifier:${verifierDid(deps.publicUrl, tenantId)}`
  const chain = (await deps.keys.keyChains(tenantId)).find((row) => row.id === config.keyChainId)
  if (config.clientIdPrefix === 'verifier_attestation') {
    const sub = verifierIdentifierOf(deps.publicUrl, tenantId)
    const problems = chain
      ? await verifierAttestationIssues(config.verifierAttestation, {
          sub,
          publicJwk: chain.activePublicJwk,
          now: deps.now(),
        })
      : [`key chain '${config.keyChainId}' is gone`]
    if (problems.length) {
      const message = `the configuration's verifier attestation cannot be used: ${problems.join('; ')}`
      throw new RuleViolationError(message, [{ path: 'body.presentationConfigId', message }])
    }
    return `verifier_attestation:${sub}`
  }
  const leaf = chain?.activeCertificates[0]
  if (!leaf)
    throw new RuleViolationError(`key chain '${config.keyChainId}' has no certificate to sign requests with`)
  return verifierClientId(config.clientIdPrefix, leaf)
}
