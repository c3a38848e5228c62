import type { IssuanceNotificationEvent, PresentationResultEvent } from './generated/types.js'

/**
 * Any body a webhook endpoint receives (the description's `webhooks`): tell the events apart by
 * `type`, a `presentation.result` by `status`. Verify `X-Signature` over the raw body before parsing.
 */
export type WebhookEvent = IssuanceNotificationEvent | PresentationResultEvent
export type WebhookEventType = WebhookEvent['type']
