import type {
  CredentialConfig,
  CredentialIssuedEventBody,
  IssuanceDeferredEventBody,
} from '@credential-service/core-domain'
import type { NewWebhookDelivery } from '@credential-service/db-schema'
import type { ProtocolDeps, WebhookEvent } from '@credential-service/server-kit'
import type { TenantScope } from '../tenant-scope'
import type { IssuedCredentials } from './issue-credentials'

export interface IssuedEventOptions {
  sessionId: string
  offered: CredentialConfig
  issued: IssuedCredentials
  notificationId: string
  deferred: boolean
  at: Date
}

/**
 * The `credential.issued` event of one credential request, sealed for the statement that records
 * the issue (so it is stored exactly when the issue is); undefined when the configuration names no
 * webhook endpoint. What was issued, never the claims.
 */
export function credentialIssuedEvent(
  scope: TenantScope<ProtocolDeps>,
  options: IssuedEventOptions,
): NewWebhookDelivery | undefined {
  const { offered, issued } = options
  if (!offered.webhookEndpointId) return undefined
  // The outbox adds `deliveryId`; the field order is the body's (its bytes are signed as stored).
  const body: CredentialIssuedEventBody = {
    type: 'credential.issued',
    tenantId: scope.tenantId,
    sessionId: options.sessionId,
    credentialConfigurationId: offered.id,
    format: offered.config.format,
    count: issued.credentials.length,
    statusListEntries: issued.statuses.map(({ uri, idx }) => ({ uri, idx })),
    deferred: options.deferred,
    notificationId: options.notificationId,
    at: options.at.toISOString(),
  }
  return scope.deps.outbox.seal({
    tenantId: scope.tenantId,
    endpointId: offered.webhookEndpointId,
    type: body.type,
    sessionId: options.sessionId,
    body,
  })
}

/** The `issuance.deferred` event of a request answered with a transaction; undefined without an endpoint. */
export function deferredEvent(
  scope: TenantScope<ProtocolDeps>,
  sessionId: string,
  offered: CredentialConfig,
  interval: number,
): WebhookEvent | undefined {
  if (!offered.webhookEndpointId) return undefined
  // The outbox adds `deliveryId`; the field order is the body's.
  const body: IssuanceDeferredEventBody = {
    type: 'issuance.deferred',
    tenantId: scope.tenantId,
    sessionId,
    credentialConfigurationId: offered.id,
    interval,
    at: scope.deps.now().toISOString(),
  }
  return { tenantId: scope.tenantId, endpointId: offered.webhookEndpointId, type: body.type, sessionId, body }
}

/** The flow's "credential issued" line: what, for whom, never the claims. */
export function logIssued(
  deps: ProtocolDeps,
  fields: {
    tenantId: string
    sessionId: string
    offered: CredentialConfig
    count: number
    deferred: boolean
  },
): void {
  deps.log.info?.(
    {
      tenantId: fields.tenantId,
      sessionId: fields.sessionId,
      credentialConfigurationId: fields.offered.id,
      format: fields.offered.config.format,
      count: fields.count,
      deferred: fields.deferred,
    },
    'credential issued',
  )
}
