import type { OutboundUrlPolicy } from '@credential-service/core-domain'
import type { JwkCipher } from '@credential-service/crypto'
import { assertPublicAddress, authHeaders, type OutboundEndpoint } from './outbound-http'

export interface DeliveryOutcome {
  status: 'delivered' | 'failed'
  attempts: number
  lastError: string | null
}

export interface DeliveryOptions {
  cipher: JwkCipher
  outbound: OutboundUrlPolicy
  /** Attempts in all (default 4). */
  attempts?: number
  /** First retry delay; doubled each time (default 1 s). */
  backoffMs?: number
  timeoutMs?: number
}

/**
 * Delivers one event to a webhook endpoint: `POST <url>` with the JSON event, signed or with the
 * API key, retried with exponential backoff on network errors and non-2xx answers. Resolves with
 * the outcome; never throws.
 */
export async function deliverWebhook(
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
      const url = new URL(endpoint.url)
      await assertPublicAddress(url, options.outbound, `webhook endpoint '${endpoint.id}'`)
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...authHeaders(endpoint, 'webhook-endpoint', body, options.cipher),
        },
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
      })
      if (response.ok) return { status: 'delivered', attempts: attempt, lastError: null }
      lastError = `HTTP ${response.status}`
    } catch (error) {
      lastError = (error as Error).message
    }
    if (attempt < attempts) {
      await new Promise((resolve) => setTimeout(resolve, delay))
      delay *= 2
    }
  }
  return { status: 'failed', attempts, lastError }
}
