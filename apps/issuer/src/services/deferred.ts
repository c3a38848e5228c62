import { randomBytes } from 'node:crypto'
import { newId, ProtocolError } from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import {
  createDeferredCredentialRepository,
  type IssuanceSessionRepository,
  type IssuanceSessionRow,
} from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { JWK } from 'jose'
import type { createClaimsSource } from './claims-source'
import { issueCredentials } from './issue-credentials'
import type { AccessGrant } from './token'

/** What the (deferred) credential endpoint answers: credentials (200) or a transaction (202). */
export type CredentialOutcome =
  | { status: 200; body: { credentials: { credential: string }[]; notification_id: string } }
  | { status: 202; body: { transaction_id: string; interval: number } }

const invalidTransaction = () =>
  new ProtocolError(
    'invalid_transaction_id',
    'the transaction_id is unknown, already delivered or not of this access token',
  )

/** Deferred issuance of one tenant (OpenID4VCI 1.0 §9), driven by the attribute provider's 202. */
export function createDeferredService(
  deps: ProtocolDeps,
  tenantId: string,
  options: {
    sessions: IssuanceSessionRepository
    claimsFor: ReturnType<typeof createClaimsSource>
    alreadyIssued: (configurationId: string) => ProtocolError
  },
) {
  const { sessions, claimsFor, alreadyIssued } = options
  const transactions = createDeferredCredentialRepository(deps.db, tenantId)

  return {
    /**
     * Keeps a request whose proofs were verified (nonce consumed) but whose claims are pending: the
     * holder keys and configuration are all that is needed to finish. The id is a 256-bit random
     * bearer value, stored hashed.
     */
    async begin(
      session: IssuanceSessionRow,
      configurationId: string,
      holderKeys: (JWK | undefined)[],
      interval: number,
    ): Promise<CredentialOutcome> {
      const transactionId = randomBytes(32).toString('base64url')
      await transactions.insert({
        transactionIdHash: codeHash(transactionId),
        sessionId: session.id,
        credentialConfigurationId: configurationId,
        holderKeys: holderKeys.map((key) => (key ? (key as Record<string, unknown>) : null)),
        intervalSeconds: interval,
      })
      return { status: 202, body: { transaction_id: transactionId, interval } }
    },

    /**
     * Deferred credential endpoint (§9.1): asks the provider again; credentials once it has the claims
     * (the transaction then ends), else the same transaction id with an interval. Only the session of
     * the access token sees its transactions (checklist S-39).
     */
    async deferredCredential(token: AccessGrant, body: Record<string, unknown>): Promise<CredentialOutcome> {
      const transactionId = body.transaction_id
      if (typeof transactionId !== 'string' || transactionId.length === 0 || transactionId.length > 200)
        throw new ProtocolError('invalid_credential_request', 'transaction_id is required')
      const hash = codeHash(transactionId)
      const row = await transactions.get(hash, token.sessionId)
      if (!row) throw invalidTransaction()
      const session = await sessions.get(token.sessionId)
      if (!session || !['token_issued', 'credential_issued'].includes(session.status)) {
        throw new ProtocolError('credential_request_denied', 'the issuance session is no longer active')
      }
      const configurationId = row.credentialConfigurationId
      if (session.issuedConfigurationIds.includes(configurationId)) throw alreadyIssued(configurationId)
      const offered = await deps.tenants.credentialConfig(tenantId, configurationId)
      if (!offered)
        throw new ProtocolError(
          'credential_request_denied',
          `no credential configuration '${configurationId}'`,
        )
      const answer = await claimsFor(session, offered)
      if (answer.status === 'pending') {
        await transactions.touch(hash, session.id)
        return { status: 202, body: { transaction_id: transactionId, interval: answer.interval } }
      }
      const credentials = await issueCredentials(deps, tenantId, {
        session,
        offered,
        holderKeys: row.holderKeys.map((key) => (key ? (key as JWK) : undefined)),
        claims: answer.claims,
      })
      // Delivery is single-use: of two concurrent requests one takes the transaction, the other is refused.
      if (!(await transactions.take(hash, session.id))) throw invalidTransaction()
      const notificationId = newId('ntf')
      if (!(await sessions.recordIssued(session.id, configurationId, notificationId, deps.now())))
        throw alreadyIssued(configurationId)
      deps.metrics.credentialsIssued(tenantId, offered.config.format, credentials.length)
      return { status: 200, body: { credentials, notification_id: notificationId } }
    },
  }
}
