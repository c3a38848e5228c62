import { createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto'
import {
  authorizationRequestByValue,
  authorizationRequestParams,
  type DcApiProtocol,
  dcApiProtocols,
  dcApiRequestParams,
  dcApiResponseMode,
  type IaFormResponseMode,
  newId,
  originIssue,
  type PresentationConfig,
  type PresentationRequestCreate,
  RuleViolationError,
  type ValidationIssue,
  verifierDid,
} from '@credential-service/core-domain'
import {
  annexCRequest,
  requestKeyReference,
  signRequestObject,
  verifierAttestationIssues,
  verifierClientId,
} from '@credential-service/crypto'
import {
  createPresentationSessionRepository,
  type Database,
  type NewPresentationSession,
  type PresentationSessionRow,
} from '@credential-service/db-schema'
import { verifierTrustChain } from '../federation/own-trust-chain'
import { requestDcqlQuery } from '../issuer-anchors'
import type { KeyRuntime } from '../key-runtime'
import type { FlowMetrics } from '../metrics'
import type { OutboundPolicy } from '../outbound-fetch'
import type { TenantCache } from '../tenant-cache'
import { verifierResponseUri } from './response-uri'
import { verifierInfoOf } from './verifier-info'

/**
 * What creating a presentation request needs; a protocol app's deps (ProtocolDeps) have it all, the
 * management API's too. The request's response encryption key is sealed with `keys.cipher`.
 */
export interface PresentationRequestDeps {
  db: Database
  keys: KeyRuntime
  tenants: TenantCache
  publicUrl: string
  metrics: FlowMetrics
  now: () => Date
  /** OUTBOUND_ALLOW_HTTP decides whether an http redirect URI is accepted; federation fetches follow it. */
  outbound: OutboundPolicy
}

/** A `dc-api` request's page origin and the protocols it offers (dcApiTransport). */
export interface DcApiTransport {
  origin: string
  protocols: DcApiProtocol[]
}

/** A new presentation session, its checks (permissions, transaction data, redirect URI) done by the caller. */
export interface PresentationSessionCreate {
  config: PresentationConfig
  responseMode: PresentationConfig['responseMode']
  lifetimeSeconds: number
  /** Same-device: where the wallet sends the user back with a response code. */
  redirectUri?: string
  /** With the Digital Credentials API: the page's origin and the protocols offered. */
  dcApi?: DcApiTransport
  transactionData?: PresentationRequestCreate['transactionData']
  webhookEndpointId: string | null
  createdByClientId: string
  /**
   * Where the wallet posts its response; by default the verifier's response endpoint
   * (verifierResponseUri).
   */
  responseUri?: (requestId: string) => string
  /** Where a `dc-api` page posts the browser's answer; by default the verifier's `/dc-api/{requestId}`. */
  dcApiResponseUri?: (requestId: string) => string
  /** Stores the session (with what the caller stores in the same statement); by default alone. */
  store?: (session: NewPresentationSession) => Promise<PresentationSessionRow>
}

export interface PresentationSessionCreated {
  id: string
  /** The stored session, as inserted (its caller need not read it back). */
  session: PresentationSessionRow
  requestId: string
  clientId: string
  /** The request object's URI (the verifier's), null for a `redirect_uri` request passed by value. */
  requestUri: string | null
  authorizationRequestUri: string
  dcApi?: {
    requests: { protocol: DcApiProtocol; data: Record<string, unknown> }[]
    responseUri: string
  }
  expiresAt: Date
}

/**
 * An OpenID4VP authorization request (§5) of one tenant: a session with a fresh nonce, state,
 * request id and response encryption key, and the `openid4vp://` URI that points to the request
 * (or holds it, by value), with the Digital Credentials API `requests` when asked for.
 */
export async function createPresentationSession(
  deps: PresentationRequestDeps,
  tenantId: string,
  input: PresentationSessionCreate,
): Promise<PresentationSessionCreated> {
  const { config, responseMode, redirectUri, dcApi } = input
  const sessions = createPresentationSessionRepository(deps.db, tenantId)
  const requestId = randomBytes(24).toString('base64url')
  const responseUri =
    input.responseUri?.(requestId) ?? verifierResponseUri(deps.publicUrl, tenantId, requestId)
  const clientId = await requestClientId(deps, tenantId, config, responseUri)

  // A fresh ECDH-ES key per request (HAIP 5): a response can only be read by its own request.
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const id = newId('ses')
  const now = deps.now()
  const expiresAt = new Date(now.getTime() + input.lifetimeSeconds * 1000)
  const nonce = randomBytes(32).toString('base64url')
  const state = randomBytes(32).toString('base64url')
  const transactionData =
    input.transactionData?.map((entry) => Buffer.from(JSON.stringify(entry)).toString('base64url')) ?? null
  const encryptionKid = randomBytes(12).toString('base64url')
  const session = await (input.store ?? sessions.insert)({
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
    webhookEndpointId: input.webhookEndpointId,
    encryptionKey: deps.keys.cipher.encrypt(
      privateKey.export({ format: 'jwk' }) as Record<string, unknown>,
      `presentation:${tenantId}/${id}`,
    ),
    encryptionKid,
    createdByClientId: input.createdByClientId,
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
  return {
    id,
    session,
    requestId,
    clientId,
    requestUri,
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
            responseUri:
              input.dcApiResponseUri?.(requestId) ??
              `${deps.publicUrl}/verifiers/${tenantId}/dc-api/${requestId}`,
          },
        }
      : {}),
    expiresAt,
  }
}

/**
 * A `dc-api` request's origin and protocols (OpenID4VP 1.0 Appendix A, ISO/IEC 18013-7 Annex C):
 * the origin must be one the configuration allows, and a same-device redirect has no place in it
 * (the browser hands the answer back to the page).
 */
export function dcApiTransport(
  deps: PresentationRequestDeps,
  config: PresentationConfig,
  input: PresentationRequestCreate,
): DcApiTransport {
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
 * OpenID4VP unsigned (parameters as they are) and signed (a request object with `client_id`,
 * `expected_origins` (A.3.2) and the registration certificate as `verifier_info`), and the Annex C
 * DeviceRequest with this request's encryption key, signed by the key chain when `dcApi.readerAuth`.
 */
export async function dcApiRequests(
  deps: PresentationRequestDeps,
  tenantId: string,
  config: PresentationConfig,
  request: {
    origin: string
    protocols: DcApiProtocol[]
    clientId: string
    responseMode: 'dc_api' | 'dc_api.jwt' | IaFormResponseMode
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
      const info = verifierInfoOf(
        await deps.tenants.registrationCertificate(tenantId, config.id),
        config,
        deps.now(),
      )
      const claims = {
        aud: 'https://self-issued.me/v2',
        iat,
        exp: Math.floor(request.expiresAt.getTime() / 1000),
        client_id: request.clientId,
        expected_origins: [request.origin],
        ...params,
        ...(info ? { verifier_info: info } : {}),
      }
      const trustChain =
        config.clientIdPrefix === 'openid_federation' ? await verifierTrustChain(deps, tenantId) : undefined
      const key = requestKeyReference(config, { publicUrl: deps.publicUrl, tenantId, trustChain })
      requests.push({ protocol, data: { request: await signRequestObject(signer, claims, key) } })
    }
    if (protocol === 'org-iso-mdoc') {
      // The request's own nonce and encryption key: HPKE's recipient is the key direct_post.jwt uses.
      const { kid: _kid, alg: _alg, use: _use, ...recipientJwk } = request.encryptionJwk
      const data = await annexCRequest({
        credential: config.dcqlQuery.credentials[0] as PresentationConfig['dcqlQuery']['credentials'][number],
        nonce: Buffer.from(request.nonce, 'base64url'),
        recipientJwk,
        readerAuth: config.dcApi?.readerAuth
          ? await readerAuth(deps, tenantId, config, request.origin)
          : undefined,
      })
      requests.push({ protocol, data: { ...data } })
    }
  }
  return requests
}

/** Annex C readerAuth's signer: the configuration's key chain, which must have a certificate to send. */
async function readerAuth(
  deps: PresentationRequestDeps,
  tenantId: string,
  config: PresentationConfig,
  origin: string,
) {
  const signer = await deps.keys.signer(tenantId, config.keyChainId)
  if (!signer.x5c.length) {
    const message = `key chain '${config.keyChainId}' has no certificate for Annex C reader authentication (dcApi.readerAuth)`
    throw new RuleViolationError(message, [{ path: 'body.presentationConfigId', message }])
  }
  return { signer, origin }
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
export async function requestClientId(
  deps: PresentationRequestDeps,
  tenantId: string,
  config: PresentationConfig,
  responseUri: string,
): Promise<string> {
  if (config.clientIdPrefix === 'redirect_uri') return `redirect_uri:${responseUri}`
  // did:web of the verifier, whose DID document lists the tenant's key chain keys (did-document.ts).
  if (config.clientIdPrefix === 'decentralized_identifier')
    return `decentralized_identifier:${verifierDid(deps.publicUrl, tenantId)}`
  // The verifier's entity identifier; its chain is resolved now, so one that does not resolve
  // fails the creation (422) instead of every wallet's check (OpenID Federation 1.0 §10).
  if (config.clientIdPrefix === 'openid_federation') {
    await verifierTrustChain(deps, tenantId)
    return `openid_federation:${deps.publicUrl}/verifiers/${tenantId}`
  }
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
  try {
    return verifierClientId(config.clientIdPrefix, leaf)
  } catch (error) {
    if (!(error instanceof RuleViolationError)) throw error
    const message = `key chain '${config.keyChainId}': ${error.message}`
    throw new RuleViolationError(message, [{ path: 'body.presentationConfigId', message }])
  }
}
