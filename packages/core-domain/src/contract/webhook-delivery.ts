import { z } from 'zod'
import { zPageQuery, zTimestamp } from './common'
import { zConfigId } from './credential-config'

/** The event types the service emits; a webhook endpoint's `events` names some of them. */
export const WEBHOOK_EVENT_TYPES = [
  'credential.issued',
  'issuance.deferred',
  'issuance.expired',
  'issuance.failed',
  'issuance.notification',
  'presentation.result',
  'presentation.status',
] as const
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivering', 'delivered', 'failed'] as const
export const zWebhookDeliveryStatus = z
  .enum(WEBHOOK_DELIVERY_STATUSES)
  .describe(
    '`pending`: waits for its next attempt; `delivering`: an attempt is under way; `delivered`: a 2xx answer came; `failed`: every attempt failed (replay it to try again)',
  )
  .meta({ id: 'WebhookDeliveryStatus' })
export type WebhookDeliveryStatus = z.infer<typeof zWebhookDeliveryStatus>

export const zWebhookDeliveryId = z
  .string()
  .regex(/^whd_[A-Za-z0-9]{1,64}$/, 'a delivery id looks like whd_…')
  .describe('Delivery id; the event body carries it as `deliveryId`')

/** One event for one webhook endpoint, as the outbox keeps it (never the body: it may hold claims). */
export const zWebhookDelivery = z
  .object({
    id: zWebhookDeliveryId,
    webhookEndpointId: zConfigId,
    eventType: z
      .string()
      .describe('The event type (`credential.issued`, `issuance.notification`, `presentation.result`)'),
    sessionId: z.string().describe('The session the event is about'),
    status: zWebhookDeliveryStatus,
    attempts: z.number().int().describe('Attempts since the event was stored or last replayed'),
    nextAttemptAt: zTimestamp
      .nullable()
      .describe(
        'When a pending delivery is tried next (for `delivering`: when its lease ends); null once done',
      ),
    lastError: z.string().nullable().describe('Why the last failed attempt failed (status or cause)'),
    replayable: z
      .boolean()
      .describe('Whether the body is still kept: the tenant’s `drop-after-delivery` drops it once delivered'),
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
    deliveredAt: zTimestamp.nullable(),
  })
  .meta({ id: 'WebhookDelivery' })
export type WebhookDelivery = z.infer<typeof zWebhookDelivery>

export const zWebhookDeliveryListQuery = zPageQuery
  .extend({ status: zWebhookDeliveryStatus.optional().describe('Only deliveries with this status') })
  .strict()
export type WebhookDeliveryListQuery = z.infer<typeof zWebhookDeliveryListQuery>

export const zWebhookReplayResult = z
  .object({ replayed: z.number().int().describe('Failed deliveries queued again') })
  .meta({ id: 'WebhookReplayResult' })
export type WebhookReplayResult = z.infer<typeof zWebhookReplayResult>
