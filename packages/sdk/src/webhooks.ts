import type { IssuanceNotificationEvent, PresentationResultEvent } from './generated/types.js'

/**
 * Any body a webhook endpoint receives (the description's `webhooks`): tell the events apart by
 * `type`, a `presentation.result` by `status`. Verify `X-Signature` over the raw body before parsing.
 */
export type WebhookEvent = IssuanceNotificationEvent | PresentationResultEvent
export type WebhookEventType = WebhookEvent['type']

/** Why `verifyWebhook` refused a delivery. */
export class WebhookVerificationError extends Error {
  readonly reason: 'missing_signature' | 'bad_signature' | 'stale' | 'invalid_body'
  constructor(reason: WebhookVerificationError['reason'], message: string) {
    super(message)
    this.name = 'WebhookVerificationError'
    this.reason = reason
  }
}

export interface VerifyWebhookOptions {
  /** How old `X-Timestamp` may be, and how far ahead (clock skew), in seconds (default 300). */
  toleranceSeconds?: number
  /** The clock, in milliseconds (tests). */
  now?: () => number
}

type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null }

const headerOf = (headers: Headers, name: string): string | undefined => {
  if (typeof (headers as { get?: unknown }).get === 'function')
    return (headers as { get(name: string): string | null }).get(name) ?? undefined
  const record = headers as Record<string, string | string[] | undefined>
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1]
  return Array.isArray(value) ? value[0] : value
}

/**
 * Checks a webhook delivery of an endpoint with `authType: "hmac"` and returns its typed body:
 * `X-Signature` must be `sha256=<hex HMAC-SHA256 of "<X-Timestamp>.<body>">` under the endpoint's
 * signing secret, and `X-Timestamp` recent. Pass the body exactly as received (the raw bytes or
 * text, before any JSON parsing) and the request headers (a Fetch `Headers` or Node's object).
 * Web Crypto only: runs in Node 20+, browsers, Deno, Bun and workers.
 */
export async function verifyWebhook(
  body: string | Uint8Array,
  headers: Headers,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const timestamp = headerOf(headers, 'x-timestamp')
  const signature = headerOf(headers, 'x-signature')
  if (!timestamp || !signature)
    throw new WebhookVerificationError('missing_signature', 'X-Timestamp and X-Signature are required')
  const hex = /^sha256=([0-9a-f]{64})$/.exec(signature)?.[1]
  if (!/^[0-9]+$/.test(timestamp) || !hex)
    throw new WebhookVerificationError('bad_signature', 'X-Timestamp or X-Signature is malformed')
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body)
  const encoder = new TextEncoder()
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  )
  const given = Uint8Array.from(hex.match(/../g) as string[], (byte) => Number.parseInt(byte, 16))
  // subtle.verify compares in constant time.
  if (!(await crypto.subtle.verify('HMAC', key, given, encoder.encode(`${timestamp}.${text}`))))
    throw new WebhookVerificationError(
      'bad_signature',
      'the signature does not match the body and the secret',
    )
  const tolerance = options.toleranceSeconds ?? 300
  const age = (options.now ?? Date.now)() / 1000 - Number(timestamp)
  if (age > tolerance || age < -tolerance)
    throw new WebhookVerificationError(
      'stale',
      `X-Timestamp is more than ${tolerance} s away from now (a replay?)`,
    )
  try {
    return JSON.parse(text) as WebhookEvent
  } catch {
    throw new WebhookVerificationError('invalid_body', 'the body is not JSON')
  }
}
