import {
  buildCredentialOffer,
  type CredentialRequest,
  type IssuanceNotificationEventBody,
  type NonceResponse,
  type NotificationRequest,
  newId,
  offerGrantServers,
  ProtocolError,
} from '@credential-service/core-domain'
import { tracedSteps } from '@credential-service/core-domain/tracing'
import {
  createIssuanceSessionRepository,
  createNotificationRepository,
  type IssuanceSessionRow,
} from '@credential-service/db-schema'
import type { ProtocolDeps, StatusLists } from '@credential-service/server-kit'
import type { ExternalTokenDeps } from '../external-tokens/verify-external-access'
import {
  type AccessGrant,
  invalidToken,
  type ResourceRequest,
  verifyAccessToken,
} from '../grants/verify-access-token'
import type { TenantScope } from '../tenant-scope'
import type { CNonces } from './c-nonces'
import { createClaimsSource } from './claims-source'
import { type CredentialOutcome, createDeferredService } from './deferred'
import { type DpopSettings, dpopChallenge } from './dpop'
import { issueCredentials } from './issue-credentials'
import { credentialIssuedEvent, logIssued } from './issued-event'
import { nonceNotSpent, verifyProofs } from './proofs'
import type { ServerNonces } from './server-nonces'

export type IssuanceDeps = ProtocolDeps & {
  /** The process's status list cache, for presentations during issuance. */
  statusLists: StatusLists
  dpop: DpopSettings
  /** Challenges for wallet attestation PoPs (ABCA `challenge_endpoint`). */
  attestationChallenges: ServerNonces
  /** The nonce endpoint's c_nonces (stateless; spent by the credential endpoint). */
  cNonces: CNonces
} & ExternalTokenDeps

const _seconds = (date: Date) => Math.floor(date.getTime() / 1000)
/**
 * A configuration this session already issued (checklist S-27; the credential count of a
 * session is its batch). credential_request_denied, 400, "the Credential Request has not been
 * accepted" and the wallet should not retry (OpenID4VCI 1.0 §8.3.1.2). Not invalid_token: the
 * access token is still valid, since the wallet sends its Notification Request with the same
 * token after the credential (§11.1), and a 401 would tell the wallet to get a new token.
 */
const alreadyIssued = (configurationId: string) =>
  new ProtocolError('credential_request_denied', `'${configurationId}' was already issued in this session`)

/**
 * A configuration that exists but that the access token does not cover (OpenID4VCI §8.3.1.1,
 * checklist I-62, S-29): 403 `insufficient_scope`, with the challenge of RFC 6750 §3.1 in the
 * token's own scheme (RFC 9449 §7.1 for a DPoP-bound one).
 */
function notCovered(token: AccessGrant, configurationId: string) {
  const description = `this access token does not cover '${configurationId}'`
  return new ProtocolError('insufficient_scope', description, {
    status: 403,
    challenge: token.dpopJkt
      ? dpopChallenge('insufficient_scope', description)
      : `Bearer error="insufficient_scope", error_description="${description.replaceAll('"', "'")}"`,
  })
}

/**
 * The session of the access token, while it can take credential requests. A completed session
 * keeps its token (the notification endpoint takes it); each of its configurations is then
 * refused as already issued.
 */
function activeOrRefused(session: IssuanceSessionRow | undefined): asserts session is IssuanceSessionRow {
  if (!session || !['token_issued', 'credential_issued', 'completed'].includes(session.status))
    throw invalidToken('the session of this access token is not active')
}

/** The OpenID4VCI endpoints of one tenant's credential issuer. */
export function createIssuanceService(scope: TenantScope<IssuanceDeps>) {
  const { deps, tenantId } = scope
  const issuer = scope.issuerUrl
  const sessions = createIssuanceSessionRepository(deps.db, tenantId)
  const config = (id: string) => deps.tenants.credentialConfig(tenantId, id)
  const notifications = createNotificationRepository(deps.db, tenantId)

  const claimsFor = createClaimsSource(scope, sessions)
  const deferred = createDeferredService(scope, { sessions, claimsFor, alreadyIssued })

  const service = {
    issuer,
    /** Verifies the access token of a protected endpoint (grants/verify-access-token.ts). */
    authorize: (request: ResourceRequest) => verifyAccessToken(scope, request),

    /** Offer by reference (OpenID4VCI §4.1.3): served while the offer is open, 404 after. */
    async offer(sessionId: string): Promise<Record<string, unknown> | undefined> {
      const row = await sessions.fetchOffer(sessionId, deps.now())
      if (!row?.offerCodeEncrypted) return undefined
      // A string: the pre-authorized code; an object: an offer with the authorization code grant.
      const stored = deps.keys.cipher.decrypt<
        string | { code: string | null; issuerState: string; authorizationServer?: string }
      >(row.offerCodeEncrypted, `offer:${tenantId}/${sessionId}`)
      const external = (await deps.tenants.authServers(tenantId)).length
      if (typeof stored === 'string')
        return buildCredentialOffer(
          issuer,
          row.credentialConfigurationIds,
          stored,
          row.txCodeSpec,
          null,
          offerGrantServers(issuer, external),
        )
      return buildCredentialOffer(
        issuer,
        row.credentialConfigurationIds,
        stored.code,
        row.txCodeSpec,
        stored.issuerState,
        offerGrantServers(issuer, external, stored.authorizationServer),
      )
    },

    /** Nonce endpoint (OpenID4VCI §7): a fresh c_nonce, single use at the credential endpoint. */
    async nonce(): Promise<NonceResponse> {
      return { c_nonce: deps.cNonces.issue(tenantId) }
    },

    /**
     * Notification endpoint (OpenID4VCI §11): records the wallet's event on the session and, in the
     * same transaction, stores it in the webhook outbox for the configuration's endpoint (when that
     * endpoint subscribes to `issuance.notification`); the outbox delivers it (signed, retried).
     */
    async notification(token: { sessionId: string }, request: NotificationRequest): Promise<void> {
      const { notification_id: notificationId, event, event_description: description } = request
      const now = deps.now()
      // Read before the transaction: PGlite runs one statement at a time, outside ones would wait.
      const configs = await deps.tenants.credentialConfigs(tenantId)
      const stored = await deps.db.transaction(async (tx) => {
        const row = await notifications.record(notificationId, token.sessionId, event, description, now, tx)
        if (!row)
          throw new ProtocolError('invalid_notification_id', 'unknown notification_id for this access token')
        const endpointId = configs.find((c) => c.id === row.credentialConfigurationId)?.webhookEndpointId
        // The outbox adds `deliveryId`; the field order is the body's (its bytes are signed as stored).
        const body: IssuanceNotificationEventBody = {
          type: 'issuance.notification',
          tenantId,
          sessionId: token.sessionId,
          credentialConfigurationId: row.credentialConfigurationId,
          event,
          ...(description ? { eventDescription: description } : {}),
          at: now.toISOString(),
        }
        const deliveryId = endpointId
          ? await deps.outbox.enqueue(tx, {
              tenantId,
              endpointId,
              type: body.type,
              sessionId: token.sessionId,
              notificationId: row.id,
              body,
            })
          : undefined
        if (!deliveryId)
          await notifications.delivered(row.id, { status: 'none', attempts: 0, lastError: null }, tx)
        return deliveryId
      })
      if (stored) void deps.outbox.kick([stored])
    },

    /**
     * Credential endpoint (OpenID4VCI §8): one credential per proof key, up to the batch size; or,
     * when the attribute provider answers "pending", a deferred transaction (§9, HTTP 202).
     */
    async credential(token: AccessGrant, request: CredentialRequest): Promise<CredentialOutcome> {
      const { configurationId, offered, proven } = await checkRequest(token, request).catch(
        async (error: unknown) => {
          // A token whose session ended is answered as such first, whatever else is wrong.
          activeOrRefused(await sessions.get(token.sessionId))
          throw error
        },
      )
      // One statement reads the session and spends the proofs' nonce (when this issuer made it).
      const { session, nonceSpent } = proven
        ? await sessions.getSpendingNonce(token.sessionId, deps.cNonces.check(tenantId, proven.nonce))
        : { session: await sessions.get(token.sessionId), nonceSpent: true }
      activeOrRefused(session)
      if (session.issuedConfigurationIds.includes(configurationId)) throw alreadyIssued(configurationId)
      if (!nonceSpent) throw nonceNotSpent()
      const holderKeys = proven ? proven.keys : [undefined]
      const answer = await claimsFor(session, offered)
      if (answer.status === 'pending') return deferred.begin(session, offered, holderKeys, answer.interval)
      const issued = await issueCredentials(scope, {
        session,
        offered,
        holderKeys,
        claims: answer.claims,
      })
      const notificationId = newId('ntf')
      const at = deps.now()
      const event = credentialIssuedEvent(scope, {
        sessionId: session.id,
        offered,
        issued,
        notificationId,
        deferred: false,
        at,
      })
      // A concurrent request for the same configuration may have recorded it since the read above:
      // its credentials then stay unsent (exactly one of the two gets any).
      const recorded = await sessions.recordIssued(session.id, configurationId, notificationId, at, event)
      if (!recorded) throw alreadyIssued(configurationId)
      if (recorded.queued && event) void deps.outbox.kick([event.id])
      const { credentials } = issued
      deps.metrics.credentialsIssued(tenantId, offered.config.format, credentials.length)
      logIssued(deps, {
        tenantId,
        sessionId: session.id,
        offered,
        count: credentials.length,
        deferred: false,
      })
      return { status: 200, body: { credentials, notification_id: notificationId } }
    },

    /** Deferred credential endpoint (OpenID4VCI §9). */
    deferredCredential: deferred.deferredCredential,
  }
  // Spans of the wallet-facing steps (tracing on only).
  return tracedSteps('issuer', service, ['nonce', 'notification', 'credential', 'offer'])

  /**
   * What the credential request can be checked for before the session is read: the configuration,
   * the token's coverage of it, and the proofs (their nonce not spent yet).
   */
  async function checkRequest(token: AccessGrant, request: CredentialRequest) {
    const configurationId = configurationOf(token, request)
    const offered = await config(configurationId)
    if (!offered)
      throw new ProtocolError(
        'unknown_credential_configuration',
        `no credential configuration '${configurationId}'`,
      )
    if (!token.configurationIds.includes(configurationId)) throw notCovered(token, configurationId)
    const proven = offered.keyBinding
      ? await verifyProofs(scope, request.proofs, offered.batchSize, offered.keyAttestation)
      : undefined
    return { configurationId, offered, proven }
  }

  /**
   * OpenID4VCI §8.2 (I-62): a configuration authorized with authorization_details is asked for by
   * its credential_identifier only; any other by credential_configuration_id.
   */
  function configurationOf(token: AccessGrant, request: CredentialRequest): string {
    const identifiers = token.credentialIdentifiers ?? {}
    if (request.credential_identifier !== undefined) {
      const id = Object.hasOwn(identifiers, request.credential_identifier)
        ? identifiers[request.credential_identifier]
        : undefined
      if (!id)
        throw new ProtocolError(
          'unknown_credential_identifier',
          'unknown credential_identifier for this access token',
        )
      return id
    }
    // The schema lets exactly one of the two through.
    const configurationId = request.credential_configuration_id as string
    if (Object.values(identifiers).includes(configurationId))
      throw new ProtocolError(
        'invalid_credential_request',
        'this configuration was authorized with authorization_details: send its credential_identifier',
      )
    return configurationId
  }
}
