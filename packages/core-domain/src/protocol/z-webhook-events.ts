import { z } from 'zod'
import { zTimestamp } from '../contract/common'
import { zCredentialFormat } from '../contract/credential-config'
import { zWebhookDeliveryId } from '../contract/webhook-delivery'
import { NOTIFICATION_EVENTS } from './z-notification-request'

/**
 * The bodies the webhook outbox sends (docs/webhooks.md): one schema per event, named in the
 * management API's OpenAPI description (`webhooks` and `components.schemas`), so the SDK exports
 * their types. The services build the bodies as {@link WebhookEventBody} values; the outbox adds
 * `deliveryId`.
 */

// Fields in the order the services write them (the body's bytes are what the signature covers).
const tenantId = z.string().describe('The tenant the event belongs to')
const sessionId = z.string().describe('The session the event is about')

const zDeliveryIdField = zWebhookDeliveryId.describe(
  'Same on every attempt, retry and replay of one event; a receiver treats one it has processed as done',
)

/** A wallet called the notification endpoint (OpenID4VCI §11) for a credential of the session. */
export const zIssuanceNotificationEvent = z
  .object({
    type: z.literal('issuance.notification'),
    tenantId,
    sessionId,
    credentialConfigurationId: z.string().describe('The configuration of the credential the wallet names'),
    event: z.enum(NOTIFICATION_EVENTS).describe('The wallet’s `event` (OpenID4VCI §11.1)'),
    eventDescription: z.string().optional().describe('The wallet’s `event_description`, when it sent one'),
    at: zTimestamp.describe('When the notification was received'),
    deliveryId: zDeliveryIdField,
  })
  .describe('`issuance.notification`: a wallet’s notification (OpenID4VCI §11) about an issued credential')
  .meta({ id: 'IssuanceNotificationEvent' })
export type IssuanceNotificationEvent = z.infer<typeof zIssuanceNotificationEvent>

/**
 * The service answered a credential request (OpenID4VCI §8) or a deferred credential request (§9)
 * with credentials: one event per request, whether or not the wallet ever sends a notification.
 * Never claim values: what was issued, how many, and where each one's status lives.
 */
export const zCredentialIssuedEvent = z
  .object({
    type: z.literal('credential.issued'),
    tenantId,
    sessionId,
    credentialConfigurationId: z.string().describe('The configuration the credentials were issued for'),
    format: zCredentialFormat,
    count: z.number().int().min(1).describe('Credentials in the answer (the batch: one per holder key)'),
    statusListEntries: z
      .array(
        z.object({
          uri: z.string().describe('The status list (its `uri` claim in the credential)'),
          idx: z.number().int().describe('The credential’s index in that list'),
        }),
      )
      .describe(
        'One entry per credential, in the answer’s order; empty when the configuration manages no status',
      ),
    deferred: z.boolean().describe('True when a deferred credential request (OpenID4VCI §9) delivered them'),
    notificationId: z
      .string()
      .describe('The `notification_id` the wallet got (OpenID4VCI §8.3); its notifications name it'),
    at: zTimestamp.describe('When the credentials were issued'),
    deliveryId: zDeliveryIdField,
  })
  .describe('`credential.issued`: credentials went out to a wallet (never their claims)')
  .meta({ id: 'CredentialIssuedEvent' })
export type CredentialIssuedEvent = z.infer<typeof zCredentialIssuedEvent>

/**
 * A credential request was answered with a transaction (OpenID4VCI §9, HTTP 202): the attribute
 * provider has no claims yet. The credential itself is reported by `credential.issued` with
 * `deferred: true` when a deferred credential request gets it (the provider is asked at the
 * wallet's poll, so "ready" and "delivered" are one moment).
 */
export const zIssuanceDeferredEvent = z
  .object({
    type: z.literal('issuance.deferred'),
    tenantId,
    sessionId,
    credentialConfigurationId: z.string().describe('The configuration the wallet asked for'),
    interval: z.number().int().min(0).describe('Seconds the wallet was told to wait before it polls'),
    at: zTimestamp.describe('When the request was deferred'),
    deliveryId: zDeliveryIdField,
  })
  .describe(
    '`issuance.deferred`: a credential request was deferred; `credential.issued` follows when it is delivered',
  )
  .meta({ id: 'IssuanceDeferredEvent' })
export type IssuanceDeferredEvent = z.infer<typeof zIssuanceDeferredEvent>

/** How far an expired offer got: never redeemed, or redeemed and then abandoned. */
export const EXPIRY_STAGES = ['offered', 'token_issued'] as const

/**
 * An offer passed its expiry unredeemed (`stage` `offered`), or its token was issued and no
 * credential was ever asked for (`stage` `token_issued`: abandoned). Sent once per session and
 * endpoint, by whichever process's sweep claims the expiry first.
 */
export const zIssuanceExpiredEvent = z
  .object({
    type: z.literal('issuance.expired'),
    tenantId,
    sessionId,
    credentialConfigurationIds: z
      .array(z.string())
      .describe('The offered configurations that name this webhook endpoint'),
    stage: z
      .enum(EXPIRY_STAGES)
      .describe(
        '`offered`: no token was issued for the offer; `token_issued`: the wallet redeemed the offer but got no credential before the offer and its access token expired (abandoned)',
      ),
    expiresAt: zTimestamp.describe('When the offer expired'),
    at: zTimestamp.describe('When the expiry was noticed (within a poll interval of `expiresAt`)'),
    deliveryId: zDeliveryIdField,
  })
  .describe('`issuance.expired`: an offer expired without being redeemed, or redeemed and abandoned')
  .meta({ id: 'IssuanceExpiredEvent' })
export type IssuanceExpiredEvent = z.infer<typeof zIssuanceExpiredEvent>

/**
 * The reason classes of `issuance.failed`: the OAuth error codes of the credential and deferred
 * credential endpoints (OpenID4VCI §8.3.1.2, §9.3, RFC 6750 §3.1), and `tx_code_locked`: the token
 * endpoint refused the last allowed wrong transaction code and failed the session (OpenID4VCI §13.6.3).
 */
export const ISSUANCE_FAILURE_REASONS = [
  'invalid_credential_request',
  'unknown_credential_configuration',
  'unknown_credential_identifier',
  'invalid_proof',
  'invalid_nonce',
  'invalid_encryption_parameters',
  'credential_request_denied',
  'insufficient_scope',
  'invalid_transaction_id',
  'tx_code_locked',
] as const
export type IssuanceFailureReason = (typeof ISSUANCE_FAILURE_REASONS)[number]

/**
 * A credential request of the session was refused. The reason class only (never the request, its
 * proofs or claims); once per session and reason, however many requests fail so.
 */
export const zIssuanceFailedEvent = z
  .object({
    type: z.literal('issuance.failed'),
    tenantId,
    sessionId,
    credentialConfigurationIds: z
      .array(z.string())
      .describe('The configurations of the access token that name this webhook endpoint'),
    reason: z
      .enum(ISSUANCE_FAILURE_REASONS)
      .describe(
        'The error code the wallet was answered with; `tx_code_locked`: too many wrong transaction codes at the token endpoint (answered `invalid_grant`), the session is failed',
      ),
    at: zTimestamp.describe('When the first request failed for this reason'),
    deliveryId: zDeliveryIdField,
  })
  .describe('`issuance.failed`: a credential request was refused (the first time per session and reason)')
  .meta({ id: 'IssuanceFailedEvent' })
export type IssuanceFailedEvent = z.infer<typeof zIssuanceFailedEvent>

export const PRESENTATION_STEPS = ['request_retrieved', 'verified', 'failed', 'expired'] as const
export type PresentationStep = (typeof PRESENTATION_STEPS)[number]

/**
 * A step of a presentation session, without claims: the wallet fetched the request object, the
 * response was verified or refused (the verifier checks a response as it arrives, so "received"
 * and the outcome are one step), or the request expired unanswered. Once per session and step.
 */
export const zPresentationStatusEvent = z
  .object({
    type: z.literal('presentation.status'),
    tenantId,
    sessionId,
    presentationConfigId: z.string().describe('The presentation configuration of the session'),
    status: z
      .enum(PRESENTATION_STEPS)
      .describe(
        '`request_retrieved`: the wallet fetched the request (request_uri); `verified` / `failed`: the response came and was checked; `expired`: no response before the expiry',
      ),
    at: zTimestamp.describe('When the step happened (for `expired`, when it was noticed)'),
    deliveryId: zDeliveryIdField,
  })
  .describe('`presentation.status`: a presentation session moved on (never claims)')
  .meta({ id: 'PresentationStatusEvent' })
export type PresentationStatusEvent = z.infer<typeof zPresentationStatusEvent>

const zPresentationBase = z.object({
  type: z.literal('presentation.result'),
  tenantId,
  sessionId,
  presentationConfigId: z.string().describe('The presentation configuration of the session'),
})

/** Verified cross-device: the disclosed claims, per credential query id. */
export const zPresentationVerifiedEvent = zPresentationBase
  .extend({
    status: z.literal('verified'),
    claims: z
      .record(z.string(), z.array(z.record(z.string(), z.unknown())))
      .describe('The disclosed claims of each presentation, keyed by the DCQL credential query id'),
    deliveryId: zDeliveryIdField,
  })
  .describe('`presentation.result`, verified (cross-device): carries the disclosed claims')
  .meta({ id: 'PresentationVerifiedEvent' })
export type PresentationVerifiedEvent = z.infer<typeof zPresentationVerifiedEvent>

/** Verified same-device: the claims go only to the holder of the response code (never a webhook). */
export const zPresentationVerifiedResponseCodeEvent = zPresentationBase
  .extend({
    status: z.literal('verified'),
    responseCodeRequired: z
      .literal(true)
      .describe('Same-device: the claims are read with the `response_code` the wallet’s redirect carries'),
    deliveryId: zDeliveryIdField,
  })
  .describe(
    '`presentation.result`, verified (same-device): no claims; the frontend reads them with the response code',
  )
  .meta({ id: 'PresentationVerifiedResponseCodeEvent' })
export type PresentationVerifiedResponseCodeEvent = z.infer<typeof zPresentationVerifiedResponseCodeEvent>

/** Failed: why the presentation was refused (or the wallet's error). */
export const zPresentationFailedEvent = zPresentationBase
  .extend({
    status: z.literal('failed'),
    failureReason: z.string().describe('Why the session failed (a wallet error, a check that failed)'),
    deliveryId: zDeliveryIdField,
  })
  .describe('`presentation.result`, failed: carries the reason')
  .meta({ id: 'PresentationFailedEvent' })
export type PresentationFailedEvent = z.infer<typeof zPresentationFailedEvent>

/** A presentation session ended (verified or failed). */
export const zPresentationResultEvent = z
  .union([zPresentationVerifiedEvent, zPresentationVerifiedResponseCodeEvent, zPresentationFailedEvent])
  .describe('`presentation.result`: a presentation session ended, verified or failed')
  .meta({ id: 'PresentationResultEvent' })
export type PresentationResultEvent = z.infer<typeof zPresentationResultEvent>

/**
 * Any webhook event body, told apart by `type` (and a `presentation.result` by `status` and its
 * fields; a plain union: two variants share `status: 'verified'`, which a zod discriminated union
 * refuses).
 */
export const zWebhookEvent = z
  .union([
    zCredentialIssuedEvent,
    zIssuanceDeferredEvent,
    zIssuanceExpiredEvent,
    zIssuanceFailedEvent,
    zIssuanceNotificationEvent,
    zPresentationResultEvent,
    zPresentationStatusEvent,
  ])
  .describe('A webhook event body; `type` names the event')
  .meta({ id: 'WebhookEvent' })
export type WebhookEvent = z.infer<typeof zWebhookEvent>

type WithoutDeliveryId<T> = T extends unknown ? Omit<T, 'deliveryId'> : never
/** An event body as a service builds it: the outbox adds `deliveryId` when it stores the event. */
export type WebhookEventBody = WithoutDeliveryId<WebhookEvent>
export type CredentialIssuedEventBody = WithoutDeliveryId<CredentialIssuedEvent>
export type IssuanceNotificationEventBody = WithoutDeliveryId<IssuanceNotificationEvent>
export type PresentationResultEventBody = WithoutDeliveryId<PresentationResultEvent>
export type IssuanceDeferredEventBody = WithoutDeliveryId<IssuanceDeferredEvent>
export type IssuanceExpiredEventBody = WithoutDeliveryId<IssuanceExpiredEvent>
export type IssuanceFailedEventBody = WithoutDeliveryId<IssuanceFailedEvent>
export type PresentationStatusEventBody = WithoutDeliveryId<PresentationStatusEvent>
