import type { WebhookEventBody, WebhookEventType } from '@credential-service/core-domain'

/** An event to store for a webhook endpoint. */
export interface WebhookEvent {
  tenantId: string
  endpointId: string
  type: WebhookEventType
  sessionId: string
  /** `issuance.notification`: the notification whose delivery fields mirror the outbox row. */
  notificationId?: string
  /** Drop the session's claims (and the stored body) once delivered. */
  dropSessionResult?: boolean
  /** The JSON body (`zWebhookEvent` of core-domain); `deliveryId` is added. */
  body: WebhookEventBody
  /** Once per endpoint and key (per session and step): a repeat stores nothing. */
  dedupeKey?: string
}
