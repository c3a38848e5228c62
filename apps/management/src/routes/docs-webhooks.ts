import {
  zCredentialIssuedEvent,
  zIssuanceDeferredEvent,
  zIssuanceExpiredEvent,
  zIssuanceFailedEvent,
  zIssuanceNotificationEvent,
  zPresentationResultEvent,
  zPresentationStatusEvent,
} from '@credential-service/core-domain'
import type { z } from 'zod'

/** `$ref` to the component a named schema (`.meta({ id })`) becomes. */
function refTo(schema: z.ZodType): { $ref: string } {
  const id = schema.meta()?.id
  if (!id) throw new Error('a webhook event schema needs .meta({ id })')
  return { $ref: `#/components/schemas/${id}` }
}

/** The headers the outbox sends (packages/server-kit/src/outbound-http.ts `authHeaders`). */
const header = (name: string, description: string, pattern: string) => ({
  name,
  in: 'header' as const,
  required: false,
  description,
  schema: { type: 'string' as const, pattern },
})
const AUTH_HEADERS = [
  header('X-Timestamp', 'HMAC endpoints: Unix time in seconds of this attempt', '^[0-9]+$'),
  header(
    'X-Signature',
    'HMAC endpoints: `sha256=<hex HMAC-SHA256 of "<X-Timestamp>.<body>">` with the endpoint’s signing secret, over the body’s bytes as received',
    '^sha256=[0-9a-f]{64}$',
  ),
  header(
    'webhook-id',
    'HMAC endpoints with `signatureHeaders` `standard-webhooks` or `both` (Standard Webhooks): the `deliveryId`, the same on every attempt',
    '^whd_[A-Za-z0-9]+$',
  ),
  header('webhook-timestamp', 'Standard Webhooks: Unix time in seconds of this attempt', '^[0-9]+$'),
  header(
    'webhook-signature',
    'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`; the key is the base64-decoded part of a `whsec_` secret, else the secret’s UTF-8 bytes',
    '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$',
  ),
]

const DELIVERY =
  'Sent by the webhook outbox (docs/webhooks.md): `POST <url>` with `Content-Type: application/json`, and either the endpoint’s API key header (`authHeader`, `x-api-key` by default) or, with HMAC, `X-Timestamp` and `X-Signature` and/or the Standard Webhooks headers (the endpoint’s `signatureHeaders`). At least once: every attempt, retry and replay carries the same `deliveryId` and body. Events are not ordered.'

function webhook(operationId: string, summary: string, description: string, schema: z.ZodType) {
  return {
    post: {
      operationId,
      summary,
      description: `${description}\n\n${DELIVERY}`,
      tags: ['webhooks'],
      // The receiver checks the endpoint's own credential (API key header or HMAC signature), not
      // an OAuth token: nothing from the API's security schemes applies.
      security: [],
      parameters: AUTH_HEADERS,
      requestBody: { required: true, content: { 'application/json': { schema: refTo(schema) } } },
      responses: {
        '2XX': { description: 'Delivered (the answer is not read)' },
        default: {
          description:
            'A failed attempt (as are a timeout of 5 s and a refused address): retried with backoff until `WEBHOOK_MAX_ATTEMPTS`',
        },
      },
    },
  }
}

/**
 * OpenAPI 3.1 `webhooks`: what a webhook endpoint receives, one entry per event type, with the
 * named body schemas of core-domain (so the SDK exports their types).
 */
export const WEBHOOKS = {
  'credential.issued': webhook(
    'credentialIssuedWebhook',
    'Credentials were issued',
    'Sent once per credential request (or deferred credential request) that a wallet got credentials for, of a configuration with `webhookEndpointId`, whether or not the wallet sends a notification later. Carries the configuration, format, count and status list entries, never claim values.',
    zCredentialIssuedEvent,
  ),
  'issuance.deferred': webhook(
    'issuanceDeferredWebhook',
    'A credential request was deferred',
    'Sent when a credential request of a configuration with `webhookEndpointId` is answered with a transaction (OpenID4VCI §9, HTTP 202) because the attribute provider has no claims yet. `credential.issued` with `deferred: true` follows when a deferred credential request delivers the credential.',
    zIssuanceDeferredEvent,
  ),
  'issuance.expired': webhook(
    'issuanceExpiredWebhook',
    'An offer expired unredeemed, or was redeemed and abandoned',
    'Sent once per session and endpoint when an offer passes its expiry without a token issued for it (`stage` `offered`), or with a token issued but no credential asked for once the offer and its access token expired (`stage` `token_issued`); noticed by the periodic sweep of the issuer processes (every `WEBHOOK_POLL_SECONDS`), so `at` may trail `expiresAt` by that much.',
    zIssuanceExpiredEvent,
  ),
  'issuance.failed': webhook(
    'issuanceFailedWebhook',
    'A credential request was refused',
    'Sent the first time a credential or deferred credential request of a session (with a valid access token) is refused for a reason: the error code only, never the request; or once when the token endpoint locks the offer after too many wrong transaction codes (`tx_code_locked`). Further refusals of the session for the same reason send nothing.',
    zIssuanceFailedEvent,
  ),
  'issuance.notification': webhook(
    'issuanceNotificationWebhook',
    'A wallet notification about an issued credential',
    'Sent when a wallet calls the notification endpoint (OpenID4VCI §11) for a credential of a configuration with `webhookEndpointId`.',
    zIssuanceNotificationEvent,
  ),
  'presentation.result': webhook(
    'presentationResultWebhook',
    'A presentation session ended',
    'Sent when a presentation session of a request or configuration with `webhookEndpointId` ends: verified with the claims (cross-device) or `responseCodeRequired` (same-device), or failed with the reason.',
    zPresentationResultEvent,
  ),
  'presentation.status': webhook(
    'presentationStatusWebhook',
    'A presentation session moved on',
    'Sent once per session and step, without claims: `request_retrieved` (the wallet fetched the request object), `verified` or `failed` (the response came and was checked), `expired` (no response before the expiry; noticed by the periodic sweep).',
    zPresentationStatusEvent,
  ),
}
