import {
  type CredentialConfig,
  DomainError,
  ProtocolError,
  resolveClaims,
} from '@credential-service/core-domain'
import { traced } from '@credential-service/core-domain/tracing'
import {
  createAttributeProviderRepository,
  type IssuanceSessionRepository,
  type IssuanceSessionRow,
} from '@credential-service/db-schema'
import { fetchAttributes, offerClaims, type ProtocolDeps } from '@credential-service/server-kit'
import { mergeClaims, pendingLoginKey } from '../login'
import type { TenantScope } from '../tenant-scope'

/** Seconds between deferred requests when the attribute provider suggests none (OpenID4VCI §9). */
export const DEFAULT_DEFERRED_INTERVAL_SECONDS = 5
/** A provider's suggested interval is kept within these bounds (the access token lives 300 s). */
const INTERVAL_BOUNDS = [1, 60] as const

/** The claims of one credential, or "not yet": the attribute provider deferred the issuance. */
export type ClaimsAnswer =
  | { status: 'claims'; claims: Record<string, unknown> }
  | { status: 'pending'; interval: number }

/**
 * Claims of one credential: the offer's, else the attribute provider's answer, validated against
 * the schema derived from `fields`. A provider failure fails the session and the request; no
 * credential is ever issued with claims that did not validate. A provider's HTTP 202 is "pending".
 * After a holder login, the provider's answer is merged over the mapped login claims.
 */
export function createClaimsSource(scope: TenantScope<ProtocolDeps>, sessions: IssuanceSessionRepository) {
  const { deps, tenantId } = scope
  return traced(
    'issuer claims',
    async function claimsFor(session: IssuanceSessionRow, config: CredentialConfig): Promise<ClaimsAnswer> {
      // The one decryption of a credential request.
      const stored = offerClaims(deps.keys.sessionData, session)
      const inline = stored[config.id]
      if (inline) return { status: 'claims', claims: inline }
      // Login claims kept while the provider was not ready; its answer goes over them.
      const login = stored[pendingLoginKey(config.id)] ?? {}
      // A completed session's claims were dropped (data minimisation): every offered credential is out.
      if (session.status === 'completed') {
        throw new ProtocolError(
          'credential_request_denied',
          'every credential of this offer was issued already',
        )
      }
      const provider = config.attributeProviderId
        ? await createAttributeProviderRepository(deps.db, tenantId).row(config.attributeProviderId)
        : undefined
      let reason: string
      try {
        const answer = provider
          ? await fetchAttributes(
              provider,
              { tenantId, sessionId: session.id, credentialConfigurationId: config.id },
              { cipher: deps.keys.cipher, outbound: deps.outbound },
            )
          : ({ status: 'claims', claims: {} } as const)
        if (answer.status === 'pending') {
          const interval = answer.interval ?? DEFAULT_DEFERRED_INTERVAL_SECONDS
          return {
            status: 'pending',
            interval: Math.min(INTERVAL_BOUNDS[1], Math.max(INTERVAL_BOUNDS[0], interval)),
          }
        }
        const resolved = resolveClaims(config, mergeClaims(login, answer.claims), 'claims')
        if (resolved.ok) return { status: 'claims', claims: resolved.claims }
        reason = `claims of '${config.id}' failed validation: ${resolved.issues.map((i) => `${i.path} ${i.message}`).join('; ')}`
      } catch (error) {
        reason = error instanceof DomainError ? error.detail : 'the attribute provider failed'
        // The wallet sees the reason only; the operator needs the cause (refused address, timeout, …).
        deps.log.warn(
          { tenantId, attributeProviderId: config.attributeProviderId, sessionId: session.id, err: error },
          'attribute provider failed',
        )
      }
      await sessions.fail(session.id, reason)
      throw new ProtocolError('credential_request_denied', reason)
    },
  )
}
