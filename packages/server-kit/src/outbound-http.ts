import { createHmac } from 'node:crypto'
import type { JwkCipher } from '@credential-service/crypto'
import { standardWebhooksHeaders } from './standard-webhooks'

/** An attribute provider or webhook endpoint row, as far as calling it goes. */
export interface OutboundEndpoint {
  tenantId: string
  id: string
  url: string
  authType: string
  authHeader: string | null
  authSecret: string | null
  /** Webhook endpoints: which signature headers an HMAC endpoint gets (default `x-signature`). */
  signatureHeaders?: string
}

/**
 * Authentication headers for a request body: the API key header, or `X-Timestamp` and
 * `X-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`, and/or, for a webhook delivery
 * (`messageId`, its delivery id) of an endpoint that asks for them, the Standard Webhooks headers.
 */
export function authHeaders(
  endpoint: OutboundEndpoint,
  kind: string,
  body: string,
  cipher: JwkCipher,
  messageId?: string,
): Record<string, string> {
  if (!endpoint.authSecret) return {}
  const secret = cipher.decrypt<string>(endpoint.authSecret, `${kind}:${endpoint.tenantId}/${endpoint.id}`)
  if (endpoint.authType === 'api-key') return { [endpoint.authHeader ?? 'x-api-key']: secret }
  if (endpoint.authType === 'hmac') {
    const timestamp = String(Math.floor(Date.now() / 1000))
    const scheme = messageId ? (endpoint.signatureHeaders ?? 'x-signature') : 'x-signature'
    return {
      ...(scheme !== 'standard-webhooks'
        ? {
            'x-timestamp': timestamp,
            'x-signature': `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`,
          }
        : {}),
      ...(scheme !== 'x-signature' && messageId
        ? standardWebhooksHeaders(secret, messageId, timestamp, body)
        : {}),
    }
  }
  return {}
}
