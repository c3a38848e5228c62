import { createHmac } from 'node:crypto'

/**
 * The key a Standard Webhooks signature uses: a `whsec_` secret is base64 of the key bytes (what
 * the Standard Webhooks libraries expect); any other secret signs with its UTF-8 bytes, as the
 * `X-Signature` scheme does (give the libraries `whsec_` + base64 of it).
 */
export function standardWebhooksKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8')
}

/**
 * Standard Webhooks headers: `webhook-id` (the delivery id, the same on every attempt, so a
 * receiver drops repeats), `webhook-timestamp` (Unix seconds of this attempt) and
 * `webhook-signature`, `v1,` and the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`.
 */
export function standardWebhooksHeaders(
  secret: string,
  messageId: string,
  timestamp: string,
  body: string,
): Record<string, string> {
  const signature = createHmac('sha256', standardWebhooksKey(secret))
    .update(`${messageId}.${timestamp}.${body}`)
    .digest('base64')
  return {
    'webhook-id': messageId,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  }
}
