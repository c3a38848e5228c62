import {
  ConflictError,
  NotFoundError,
  type Page,
  type Principal,
  type WebhookDelivery,
  type WebhookDeliveryListQuery,
  type WebhookReplayResult,
} from '@credential-service/core-domain'
import {
  createWebhookDeliveryRepository,
  createWebhookEndpointRepository,
  type Database,
  recordAudit,
  toWebhookDelivery,
} from '@credential-service/db-schema'
import type { WebhookOutbox } from '@credential-service/server-kit'

export interface WebhookDeliveryServiceDeps {
  db: Database
  /** Kicked after a replay, so the event goes out at once rather than at the next poll. */
  outbox: WebhookOutbox
  now: () => Date
}

/** The outbox rows of one tenant's webhook endpoints: list, read, replay (audited). */
export function createWebhookDeliveryService(
  deps: WebhookDeliveryServiceDeps,
  tenantId: string,
  actor: Principal,
) {
  const endpoints = createWebhookEndpointRepository(deps.db, tenantId)
  const deliveries = createWebhookDeliveryRepository(deps.db, tenantId)
  const requireEndpoint = async (endpointId: string) => {
    if (!(await endpoints.row(endpointId))) throw new NotFoundError('webhook endpoint', endpointId)
  }
  const notFound = (id: string) => new NotFoundError('webhook delivery', id)
  // A replay sends personal data out again: who did it is recorded with the change itself.
  const audited = <T>(
    resourceId: string,
    detail: Record<string, unknown>,
    change: (tx: Database) => Promise<T>,
  ) =>
    deps.db.transaction(async (tx) => {
      const result = await change(tx)
      if (result !== undefined && result !== 0)
        await recordAudit(tx, {
          tenantId,
          actorClientId: actor.clientId,
          action: 'replay',
          resourceType: 'webhook-delivery',
          resourceId,
          detail: { ...detail, ...(typeof result === 'number' ? { replayed: result } : {}) },
        })
      return result
    })

  return {
    async list(endpointId: string, query: WebhookDeliveryListQuery): Promise<Page<WebhookDelivery>> {
      await requireEndpoint(endpointId)
      return deliveries.list(endpointId, query)
    },

    async get(endpointId: string, id: string): Promise<WebhookDelivery> {
      const row = await deliveries.get(endpointId, id)
      if (!row) throw notFound(id)
      return toWebhookDelivery(row)
    },

    /** Queues one delivery again (any status but `delivering`) while its body is kept. */
    async replay(endpointId: string, id: string): Promise<WebhookDelivery> {
      const row = await audited(id, { endpointId }, (tx) => deliveries.replay(endpointId, id, deps.now(), tx))
      if (!row) {
        const current = await deliveries.get(endpointId, id)
        if (!current) throw notFound(id)
        throw new ConflictError(
          current.status === 'delivering'
            ? 'an attempt of this delivery is under way; replay it once it has ended'
            : 'the event body was dropped once delivered (tenant presentationRetention drop-after-delivery)',
        )
      }
      void deps.outbox.kick()
      return toWebhookDelivery(row)
    },

    /** Queues every failed delivery of the endpoint again. */
    async replayFailed(endpointId: string): Promise<WebhookReplayResult> {
      await requireEndpoint(endpointId)
      const replayed = await audited(`${endpointId}/failed`, { endpointId }, (tx) =>
        deliveries.replayFailed(endpointId, deps.now(), tx),
      )
      if (replayed > 0) void deps.outbox.kick()
      return { replayed }
    },
  }
}
