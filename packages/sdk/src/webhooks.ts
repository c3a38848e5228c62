import type {
  CredentialIssuedEvent,
  IssuanceDeferredEvent,
  IssuanceExpiredEvent,
  IssuanceFailedEvent,
  IssuanceNotificationEvent,
  PresentationResultEvent,
  PresentationStatusEvent,
} from './generated/types.js'

/**
 * Any body a webhook endpoint receives (the description's `webhooks`): tell the events apart by
 * `type`, a `presentation.result` by `status`. Verify the signature over the raw body before parsing.
 */
export type WebhookEvent =
  | CredentialIssuedEvent
  | IssuanceDeferredEvent
  | IssuanceExpiredEvent
  | IssuanceFailedEvent
  | IssuanceNotificationEvent
  | PresentationResultEvent
  | PresentationStatusEvent
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
  /** How old the timestamp may be, and how far ahead (clock skew), in seconds (default 300). */
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

const encoder = new TextEncoder()

const hmacKey = (bytes: Uint8Array<ArrayBuffer>) =>
  crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])

const fromBase64 = (text: string): Uint8Array<ArrayBuffer> | undefined => {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0))
}

/** The Standard Webhooks key: a `whsec_` secret is base64 of it, any other secret its UTF-8 bytes. */
function standardKey(secret: string): Uint8Array<ArrayBuffer> {
  const decoded = secret.startsWith('whsec_') ? fromBase64(secret.slice(6)) : undefined
  return decoded ?? encoder.encode(secret)
}

/** `X-Signature: sha256=<hex HMAC-SHA256 of "<X-Timestamp>.<body>">`; the timestamp if it verifies. */
async function checkXSignature(text: string, headers: Headers, secret: string): Promise<string> {
  const timestamp = headerOf(headers, 'x-timestamp') as string
  const hex = /^sha256=([0-9a-f]{64})$/.exec(headerOf(headers, 'x-signature') as string)?.[1]
  if (!/^[0-9]+$/.test(timestamp) || !hex)
    throw new WebhookVerificationError('bad_signature', 'X-Timestamp or X-Signature is malformed')
  const given = Uint8Array.from(hex.match(/../g) as string[], (byte) => Number.parseInt(byte, 16))
  // subtle.verify compares in constant time.
  const key = await hmacKey(encoder.encode(secret))
  if (!(await crypto.subtle.verify('HMAC', key, given, encoder.encode(`${timestamp}.${text}`))))
    throw new WebhookVerificationError(
      'bad_signature',
      'the signature does not match the body and the secret',
    )
  return timestamp
}

/**
 * Standard Webhooks: `webhook-signature` lists space-separated `v1,<base64>` signatures of
 * `<webhook-id>.<webhook-timestamp>.<body>`; one that verifies is enough (secret rotation).
 */
async function checkStandard(text: string, headers: Headers, secret: string): Promise<string> {
  const id = headerOf(headers, 'webhook-id') as string
  const timestamp = headerOf(headers, 'webhook-timestamp') as string
  if (!/^[0-9]+$/.test(timestamp))
    throw new WebhookVerificationError('bad_signature', 'webhook-timestamp is malformed')
  const key = await hmacKey(standardKey(secret))
  const signed = encoder.encode(`${id}.${timestamp}.${text}`)
  for (const entry of (headerOf(headers, 'webhook-signature') as string).split(' ')) {
    const [version, value] = entry.split(',', 2)
    const given = version === 'v1' && value ? fromBase64(value) : undefined
    if (given && (await crypto.subtle.verify('HMAC', key, given, signed))) return timestamp
  }
  throw new WebhookVerificationError('bad_signature', 'no webhook-signature matches the body and the secret')
}

/**
 * Checks a webhook delivery of an endpoint with `authType: "hmac"` and returns its typed body.
 * Either scheme the endpoint's `signatureHeaders` asks for is accepted: the Standard Webhooks
 * headers (`webhook-id`, `webhook-timestamp`, `webhook-signature` `v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>">`), checked first when present, or `X-Signature`
 * (`sha256=<hex HMAC-SHA256 of "<X-Timestamp>.<body>">`); the timestamp must be recent. Pass the
 * body exactly as received (the raw bytes or text, before any JSON parsing), the request headers
 * (a Fetch `Headers` or Node's object) and the endpoint's signing secret as shown (a `whsec_`
 * secret signs Standard Webhooks with its decoded bytes). Web Crypto only: runs in Node 20+,
 * browsers, Deno, Bun and workers.
 */
export async function verifyWebhook(
  body: string | Uint8Array,
  headers: Headers,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body)
  const standard = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].every((name) =>
    headerOf(headers, name),
  )
  if (!standard && !(headerOf(headers, 'x-timestamp') && headerOf(headers, 'x-signature')))
    throw new WebhookVerificationError(
      'missing_signature',
      'webhook-id, webhook-timestamp and webhook-signature, or X-Timestamp and X-Signature, are required',
    )
  const timestamp = standard
    ? await checkStandard(text, headers, secret)
    : await checkXSignature(text, headers, secret)
  const tolerance = options.toleranceSeconds ?? 300
  const age = (options.now ?? Date.now)() / 1000 - Number(timestamp)
  if (age > tolerance || age < -tolerance)
    throw new WebhookVerificationError(
      'stale',
      `the timestamp is more than ${tolerance} s away from now (a replay?)`,
    )
  try {
    return JSON.parse(text) as WebhookEvent
  } catch {
    throw new WebhookVerificationError('invalid_body', 'the body is not JSON')
  }
}
