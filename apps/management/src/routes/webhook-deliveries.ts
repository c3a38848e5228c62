import {
  type Role,
  zConfigId,
  zPage,
  zWebhookDelivery,
  zWebhookDeliveryId,
  zWebhookDeliveryListQuery,
  zWebhookReplayResult,
} from '@credential-service/core-domain'
import { problemResponses, requireTenantScope, tenantMount } from '@credential-service/server-kit'
import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import {
  createWebhookDeliveryService,
  type WebhookDeliveryServiceDeps,
} from '../services/webhook-delivery-service'

// Whoever manages webhook endpoints sees and replays their deliveries.
const ROLES: Role[] = ['issuance:config', 'presentation:config']
const OUTBOX_NOTE =
  'Each event is stored in the webhook outbox with the change it reports and delivered at least once, with retries (`WEBHOOK_MAX_ATTEMPTS`, backoff from `WEBHOOK_BACKOFF_MS`). Bodies are not shown: they may carry disclosed claims.'

/** The deliveries of a webhook endpoint, under the tenant and as the shorthand. */
export function webhookDeliveryRoutes(
  deps: WebhookDeliveryServiceDeps,
  mount: { tenantInPath: boolean },
): FastifyPluginAsyncZod {
  const endpoints = tenantMount({
    collection: 'webhook-endpoints',
    tenantInPath: mount.tenantInPath,
    itemKey: 'webhookEndpointId',
    itemSchema: zConfigId,
  })
  const base = `${endpoints.item}/deliveries`
  const itemParams = endpoints.itemParams.extend({ deliveryId: zWebhookDeliveryId })
  const tags = ['webhook-endpoints']

  return async (app) => {
    const service = (req: FastifyRequest) =>
      createWebhookDeliveryService(deps, requireTenantScope(req), req.principal)

    app.get(
      base,
      {
        config: { roles: ROLES },
        schema: {
          operationId: endpoints.op('listWebhookDeliveries'),
          tags,
          summary: 'List the deliveries of a webhook endpoint, newest first',
          description: OUTBOX_NOTE,
          params: endpoints.itemParams,
          querystring: zWebhookDeliveryListQuery,
          response: { 200: zPage(zWebhookDelivery), ...problemResponses },
        },
      },
      (req) => service(req).list(req.params.webhookEndpointId, req.query),
    )

    app.get(
      `${base}/:deliveryId`,
      {
        config: { roles: ROLES },
        schema: {
          operationId: endpoints.op('getWebhookDelivery'),
          tags,
          summary: 'Get a delivery of a webhook endpoint',
          params: itemParams,
          response: { 200: zWebhookDelivery, ...problemResponses },
        },
      },
      (req) => service(req).get(req.params.webhookEndpointId, req.params.deliveryId),
    )

    app.post(
      `${base}/:deliveryId/replay`,
      {
        config: { roles: ROLES },
        schema: {
          operationId: endpoints.op('replayWebhookDelivery'),
          tags,
          summary: 'Send a delivery again',
          description:
            'Queues the stored event again, due now, with a fresh count of attempts; the body is the same, `deliveryId` included. Any status but `delivering` (409 while an attempt is under way), and only while the body is kept (409 once `drop-after-delivery` dropped it).',
          params: itemParams,
          response: { 202: zWebhookDelivery, ...problemResponses },
        },
      },
      async (req, reply) =>
        reply
          .status(202)
          .send(await service(req).replay(req.params.webhookEndpointId, req.params.deliveryId)),
    )

    app.post(
      `${base}/replay-failed`,
      {
        config: { roles: ROLES },
        schema: {
          operationId: endpoints.op('replayFailedWebhookDeliveries'),
          tags,
          summary: 'Send every failed delivery of a webhook endpoint again',
          params: endpoints.itemParams,
          response: { 202: zWebhookReplayResult, ...problemResponses },
        },
      },
      async (req, reply) =>
        reply.status(202).send(await service(req).replayFailed(req.params.webhookEndpointId)),
    )
  }
}
