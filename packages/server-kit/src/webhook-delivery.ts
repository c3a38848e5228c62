import type { JwkCipher } from '@credential-service/crypto'
import type { FlowMetrics } from './metrics'
import { type OutboundPolicy, outboundFetch } from './outbound-fetch'
import { authHeaders, type OutboundEndpoint } from './outbound-http'

/** Where failed deliveries and outbound calls are reported (a pino logger). */
export interface OutboundLog {
  warn(object: Record<string, unknown>, message: string): void
  /** The flow's story (docs/operations.md "Flow log lines"): one line per domain step. */
  info?(object: Record<string, unknown>, message: string): void
}

export interface SendOptions {
  cipher: JwkCipher
  outbound: OutboundPolicy
  /** Limit of the attempt, connect to last byte (default 5 s). */
  timeoutMs?: number
  /** The attempt's number, for the log line of a failure. */
  attempt?: number
  /** The delivery id: the Standard Webhooks `webhook-id`. */
  deliveryId?: string
  /** Receives one line per failed attempt, with the endpoint, the attempt and the cause. */
  log?: OutboundLog
  /** Counts the delivery while it runs and its outcome. */
  metrics?: Pick<FlowMetrics, 'webhookDelivery'>
}

/** `ok`, or why the attempt failed (`HTTP <status>` or the cause). */
export type SendResult = { ok: true } | { ok: false; error: string }

/**
 * One attempt to deliver an event body to a webhook endpoint: `POST <url>` with the JSON body,
 * signed or with the API key, through `outboundFetch` (checked address, no redirects, size and
 * time caps). A 2xx answer delivers it. Never throws; retries are the outbox's business.
 */
export async function sendWebhook(
  endpoint: OutboundEndpoint,
  body: string,
  options: SendOptions,
): Promise<SendResult> {
  const where = { webhookEndpointId: endpoint.id, tenantId: endpoint.tenantId, attempt: options.attempt ?? 1 }
  try {
    const response = await outboundFetch(
      endpoint.url,
      {
        name: `webhook endpoint '${endpoint.id}'`,
        purpose: 'webhook',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...authHeaders(endpoint, 'webhook-endpoint', body, options.cipher, options.deliveryId),
        },
        body,
        // The status says whether the event arrived; whatever the receiver writes is not read.
        readBody: false,
        timeoutMs: options.timeoutMs ?? 5000,
      },
      options.outbound,
    )
    if (response.status >= 200 && response.status < 300) return { ok: true }
    options.log?.warn({ ...where, status: response.status }, 'webhook delivery failed')
    return { ok: false, error: `HTTP ${response.status}` }
  } catch (error) {
    options.log?.warn({ ...where, err: error }, 'webhook delivery failed')
    return { ok: false, error: (error as Error).message }
  }
}
