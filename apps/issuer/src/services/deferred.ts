import { randomBytes } from 'node:crypto'
import {
  type CredentialConfig,
  type DeferredCredentialRequest,
  formatSpec,
  newId,
  ProtocolError,
} from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import {
  createDeferredCredentialRepository,
  createIssuanceSessionRepository,
  type DeferredCredentialRow,
  type IssuanceSessionRepository,
  type IssuanceSessionRow,
} from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { JWK } from 'jose'
import type { AccessGrant } from '../grants/verify-access-token'
import type { TenantScope } from '../tenant-scope'
import type { createClaimsSource } from './claims-source'
import { issueCredentials } from './issue-credentials'
import { credentialIssuedEvent, deferredEvent, logIssued } from './issued-event'

/** What the (deferred) credential endpoint answers: credentials (200) or a transaction (202). */
export type CredentialOutcome =
  | { status: 200; body: { credentials: { credential: string }[]; notification_id: string } }
  | { status: 202; body: { transaction_id: string; interval: number } }

const invalidTransaction = () =>
  new ProtocolError(
    'invalid_transaction_id',
    'the transaction_id is unknown, already delivered or not of this access token',
  )

/** Ours are 43 characters; anything this long was never handed out. */
const MAX_TRANSACTION_ID_LENGTH = 200
/**
 * How long one poll holds a transaction while it asks the provider (at most 30 s) and issues; a
 * poll of a pod that died frees it after this.
 */
const LEASE_SECONDS = 60

/**
 * Why a configuration changed since the deferral can no longer deliver the transaction: the keys
 * verified at the first request do not fit it any more.
 */
function misfit(offered: CredentialConfig, row: DeferredCredentialRow): string | undefined {
  const unbound = row.holderKeys.some((key) => key === null)
  if (unbound && (offered.keyBinding || formatSpec(offered.config.format).holderKeyRequired))
    return `'${offered.id}' now needs holder keys, which this transaction has none of`
  if (row.holderKeys.length > offered.batchSize)
    return `'${offered.id}' now issues batches of at most ${offered.batchSize}`
  return undefined
}

/** Deferred issuance of one tenant (OpenID4VCI 1.0 §9), driven by the attribute provider's 202. */
export function createDeferredService(
  scope: TenantScope<ProtocolDeps>,
  options: {
    sessions: IssuanceSessionRepository
    claimsFor: ReturnType<typeof createClaimsSource>
    alreadyIssued: (configurationId: string) => ProtocolError
  },
) {
  const { deps, tenantId } = scope
  const { sessions, claimsFor, alreadyIssued } = options
  const transactions = createDeferredCredentialRepository(deps.db, tenantId)

  return {
    /**
     * Keeps a request whose proofs were verified (nonce consumed) but whose claims are pending: the
     * holder keys and configuration are all that is needed to finish. The id is a 256-bit random
     * bearer value, stored hashed. The `issuance.deferred` event is stored with it.
     */
    async begin(
      session: IssuanceSessionRow,
      offered: CredentialConfig,
      holderKeys: (JWK | undefined)[],
      interval: number,
    ): Promise<CredentialOutcome> {
      const configurationId = offered.id
      const transactionId = randomBytes(32).toString('base64url')
      const row = {
        transactionIdHash: codeHash(transactionId),
        sessionId: session.id,
        credentialConfigurationId: configurationId,
        holderKeys: holderKeys.map((key) => (key ? (key as Record<string, unknown>) : null)),
        intervalSeconds: interval,
        nextAskAt: new Date(deps.now().getTime() + interval * 1000),
      }
      const event = deferredEvent(scope, session.id, offered, interval)
      if (!event) await transactions.insert(row)
      else {
        // The transaction and its event commit together.
        const stored = await deps.db.transaction(async (tx) => {
          await transactions.insert(row, tx)
          return deps.outbox.enqueue(tx, event)
        })
        if (stored) void deps.outbox.kick([stored])
      }
      return { status: 202, body: { transaction_id: transactionId, interval } }
    },

    /**
     * Deferred credential endpoint (§9.1). One poll at a time asks the provider, and not before the
     * interval it last suggested: any other poll gets 202 with the same transaction id. Credentials
     * once it has the claims; the transaction ends with their delivery. Only the session of the
     * access token sees its transactions (checklist S-39).
     */
    async deferredCredential(
      token: AccessGrant,
      request: DeferredCredentialRequest,
    ): Promise<CredentialOutcome> {
      const transactionId = request.transaction_id
      if (transactionId.length > MAX_TRANSACTION_ID_LENGTH) throw invalidTransaction()
      const hash = codeHash(transactionId)
      const row = await transactions.get(hash, token.sessionId)
      if (!row) throw invalidTransaction()
      const session = await sessions.get(token.sessionId)
      if (!session || !['token_issued', 'credential_issued'].includes(session.status)) {
        throw new ProtocolError('credential_request_denied', 'the issuance session is no longer active')
      }
      const configurationId = row.credentialConfigurationId
      if (session.issuedConfigurationIds.includes(configurationId)) throw alreadyIssued(configurationId)
      // §9.3: delivery became impossible; the transaction ends.
      const deny = async (reason: string): Promise<never> => {
        await transactions.take(hash, session.id)
        throw new ProtocolError('credential_request_denied', reason)
      }
      const offered = await deps.tenants.credentialConfig(tenantId, configurationId)
      if (!offered) return deny(`no credential configuration '${configurationId}'`)
      const changed = misfit(offered, row)
      if (changed) return deny(changed)
      const now = deps.now()
      if (!(await transactions.lease(hash, session.id, now, new Date(now.getTime() + LEASE_SECONDS * 1000))))
        return { status: 202, body: { transaction_id: transactionId, interval: row.intervalSeconds } }
      let interval = row.intervalSeconds
      let delivered = false
      try {
        const answer = await claimsFor(session, offered)
        if (answer.status === 'pending') {
          interval = answer.interval
          return { status: 202, body: { transaction_id: transactionId, interval } }
        }
        // Resolved before the transaction, which PGlite runs alone.
        const signer = await deps.keys.signer(tenantId, offered.keyChainId)
        const notificationId = newId('ntf')
        // Delivery, status list entries, the session's record and the event commit together, or none.
        const { credentials, queued } = await deps.db.transaction(async (tx) => {
          if (!(await transactions.take(hash, session.id, tx))) throw invalidTransaction()
          const issued = await issueCredentials(scope, {
            session,
            offered,
            holderKeys: row.holderKeys.map((key) => (key ? (key as JWK) : undefined)),
            claims: answer.claims,
            tx: { tx, signer },
          })
          const at = deps.now()
          const event = credentialIssuedEvent(scope, {
            sessionId: session.id,
            offered,
            issued,
            notificationId,
            deferred: true,
            at,
          })
          const recorded = await createIssuanceSessionRepository(tx, tenantId).recordIssued(
            session.id,
            configurationId,
            notificationId,
            at,
            event,
          )
          if (!recorded) throw alreadyIssued(configurationId)
          return { credentials: issued.credentials, queued: recorded.queued ? event?.id : undefined }
        })
        if (queued) void deps.outbox.kick([queued])
        delivered = true
        deps.metrics.credentialsIssued(tenantId, offered.config.format, credentials.length)
        logIssued(deps, {
          tenantId,
          sessionId: session.id,
          offered,
          count: credentials.length,
          deferred: true,
        })
        return { status: 200, body: { credentials, notification_id: notificationId } }
      } finally {
        // Not delivered: the next poll may ask again after the interval.
        if (!delivered) await transactions.release(hash, session.id, deps.now(), interval)
      }
    },
  }
}
