import type { JwkCipher } from '@credential-service/crypto'
import type { FlowMetrics } from './metrics'
import { type OutboundPolicy, outboundFetch } from './outbound-fetch'
import { authHeaders, type OutboundEndpoint } from './outbound-http'

export interface DeliveryOutcome {
  status: 'delivered' | 'failed'
  attempts: number
  lastError: string | null
}

/** Where failed deliveries and outbound calls are reported (a pino logger). */
export interface OutboundLog {
  warn(object: Record<string, unknown>, message: string): void
}

export interface DeliveryOptions {
  cipher: JwkCipher
  outbound: OutboundPolicy
  /** Attempts in all (default 4). */
  attempts?: number
  /** First retry delay; doubled each time (default 1 s). */
  backoffMs?: number
  /** Limit of one attempt, connect to last byte (default 5 s). */
  timeoutMs?: number
  /** Receives one line per failed attempt, with the endpoint, the attempt and the cause. */
  log?: OutboundLog
  /** Counts the delivery while it runs and its outcome. */
  metrics?: Pick<FlowMetrics, 'webhookDelivery'>
}

/**
 * Delivers one event to a webhook endpoint: `POST <url>` with the JSON event, signed or with the
 * API key, retried with exponential backoff on network errors and non-2xx answers. Each attempt
 * goes through `outboundFetch` (checked address, no redirects, size and time caps). Resolves with
 * the outcome; never throws.
 */
export async function deliverWebhook(
  endpoint: OutboundEndpoint,
  event: Record<string, unknown>,
  options: DeliveryOptions,
): Promise<DeliveryOutcome> {
  const finished = options.metrics?.webhookDelivery(endpoint.tenantId)
  const outcome = await attemptDelivery(endpoint, event, options)
  finished?.(outcome.status)
  return outcome
}

async function attemptDelivery(
  endpoint: OutboundEndpoint,
  event: Record<string, unknown>,
  options: DeliveryOptions,
): Promise<DeliveryOutcome> {
  const attempts = options.attempts ?? 4
  let delay = options.backoffMs ?? 1000
  let lastError: string | null = null
  const body = JSON.stringify(event)
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const response = await outboundFetch(
        endpoint.url,
        {
          name: `webhook endpoint '${endpoint.id}'`,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...authHeaders(endpoint, 'webhook-endpoint', body, options.cipher),
          },
          body,
          // The status says whether the event arrived; whatever the receiver writes is not read.
          readBody: false,
          timeoutMs: options.timeoutMs ?? 5000,
        },
        options.outbound,
      )
      if (response.status >= 200 && response.status < 300)
        return { status: 'delivered', attempts: attempt, lastError: null }
      lastError = `HTTP ${response.status}`
      options.log?.warn(
        { webhookEndpointId: endpoint.id, tenantId: endpoint.tenantId, attempt, status: response.status },
        'webhook delivery failed',
      )
    } catch (error) {
      lastError = (error as Error).message
      options.log?.warn(
        { webhookEndpointId: endpoint.id, tenantId: endpoint.tenantId, attempt, err: error },
        'webhook delivery failed',
      )
    }
    if (attempt < attempts) {
      await new Promise((resolve) => setTimeout(resolve, delay))
      delay *= 2
    }
  }
  return { status: 'failed', attempts, lastError }
}
