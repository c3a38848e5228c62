import {
  InvalidInputError,
  ISSUANCE_FAILURE_REASONS,
  type IssuanceFailedEventBody,
  type IssuanceFailureReason,
  ProtocolError,
} from '@credential-service/core-domain'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { AccessGrant } from '../grants/verify-access-token'
import type { TenantScope } from '../tenant-scope'

/** The reason class of a refused credential request: the error code the wallet gets, nothing else. */
function reasonOf(error: unknown): IssuanceFailureReason | undefined {
  // Malformed input is answered as invalid_credential_request by the route (routes/credential.ts).
  if (error instanceof InvalidInputError) return 'invalid_credential_request'
  if (!(error instanceof ProtocolError)) return undefined
  return (ISSUANCE_FAILURE_REASONS as readonly string[]).includes(error.error)
    ? (error.error as IssuanceFailureReason)
    : undefined
}

/**
 * Stores `issuance.failed` for a credential request of a valid access token that was refused:
 * once per session, reason and endpoint (the endpoints of the token's configurations), however
 * many requests fail so (a flood of bad proofs is one event; the outbox's `enqueueOnce`). Never
 * fails the request: the wallet gets its error whatever happens here.
 */
export async function reportFailure(
  scope: TenantScope<ProtocolDeps>,
  token: AccessGrant,
  error: unknown,
): Promise<void> {
  const reason = reasonOf(error)
  if (reason) await storeFailed(scope, token, reason)
}

/**
 * Stores `issuance.failed` with `reason` for the session, once per session, reason and endpoint
 * (the endpoints of `session.configurationIds`). Never throws.
 */
export async function storeFailed(
  scope: TenantScope<ProtocolDeps>,
  token: Pick<AccessGrant, 'sessionId' | 'configurationIds'>,
  reason: IssuanceFailureReason,
): Promise<void> {
  const { deps, tenantId } = scope
  try {
    const configs = (await deps.tenants.credentialConfigs(tenantId)).filter((c) =>
      token.configurationIds.includes(c.id),
    )
    const endpoints = new Set(configs.flatMap((c) => (c.webhookEndpointId ? [c.webhookEndpointId] : [])))
    for (const endpointId of endpoints) {
      // The outbox adds `deliveryId`; the field order is the body's.
      const body: IssuanceFailedEventBody = {
        type: 'issuance.failed',
        tenantId,
        sessionId: token.sessionId,
        credentialConfigurationIds: configs
          .filter((c) => c.webhookEndpointId === endpointId)
          .map((c) => c.id),
        reason,
        at: deps.now().toISOString(),
      }
      await deps.outbox.enqueueOnce({
        tenantId,
        endpointId,
        type: body.type,
        sessionId: token.sessionId,
        body,
        dedupeKey: `${body.type}:${token.sessionId}:${reason}`,
      })
    }
  } catch (failure) {
    deps.log.warn({ tenantId, sessionId: token.sessionId, err: failure }, 'issuance.failed event not stored')
  }
}
