import { z } from 'zod'
import { zTimestamp } from './common'
import { zConfigId } from './credential-config'

/** How the service authenticates to an attribute provider or webhook endpoint. */
export const zEndpointAuthInput = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('none') }).strict(),
    z
      .object({
        type: z.literal('api-key'),
        headerName: z
          .string()
          .regex(/^[A-Za-z0-9-]{1,100}$/)
          .default('x-api-key'),
        value: z.string().min(8).max(1000).describe('Sent in `headerName`; stored encrypted, never returned'),
      })
      .strict(),
    z
      .object({
        type: z.literal('hmac'),
        secret: z
          .string()
          .min(32)
          .max(500)
          .optional()
          .describe('Your own signing secret (e.g. from an import file); generated when absent'),
      })
      .strict()
      .describe('Requests carry an HMAC-SHA256 signature; a generated secret is shown once'),
  ])
  .meta({ id: 'EndpointAuthDefinition' })

/** The same, as returned: no secret value. */
export const zEndpointAuth = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('none') }),
    z.object({ type: z.literal('api-key'), headerName: z.string() }),
    z.object({ type: z.literal('hmac') }),
  ])
  .meta({ id: 'EndpointAuth' })
export type EndpointAuth = z.infer<typeof zEndpointAuth>

const endpointInput = {
  id: zConfigId,
  description: z.string().max(2000).optional(),
  url: z
    .url()
    .max(2000)
    .describe(
      'https (http only where OUTBOUND_ALLOW_HTTP is set); no private or loopback address unless allowed',
    ),
  auth: zEndpointAuthInput.default({ type: 'none' }),
}

export const zAttributeProviderInput = z
  .object({ ...endpointInput, timeoutMs: z.number().int().min(100).max(30_000).default(5000) })
  .strict()
  .describe('Attribute provider, as sent to create or replace one')
  .meta({ id: 'AttributeProviderDefinition' })
export type AttributeProviderInput = z.input<typeof zAttributeProviderInput>
export type AttributeProviderData = z.output<typeof zAttributeProviderInput>

/**
 * Which signature headers an HMAC endpoint's deliveries carry: today's `X-Timestamp` and
 * `X-Signature`, the Standard Webhooks ones (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`), or both (while a receiver moves from one to the other).
 */
export const WEBHOOK_SIGNATURE_HEADERS = ['x-signature', 'standard-webhooks', 'both'] as const
export const zSignatureHeaders = z
  .enum(WEBHOOK_SIGNATURE_HEADERS)
  .describe(
    'HMAC endpoints: `x-signature` (X-Timestamp, X-Signature), `standard-webhooks` (webhook-id, webhook-timestamp, webhook-signature `v1,<base64>`), or `both`. A generated secret is `whsec_<base64>` as Standard Webhooks libraries expect',
  )
  .meta({ id: 'WebhookSignatureHeaders' })
export type WebhookSignatureHeaders = z.infer<typeof zSignatureHeaders>

export const zWebhookEndpointInput = z
  .object({
    ...endpointInput,
    events: z
      .array(z.string().min(1).max(100))
      .max(50)
      .optional()
      .describe(
        'Event types to deliver (`credential.issued`, `issuance.notification`, `presentation.result`); all when absent. Other events are never stored or sent',
      ),
    signatureHeaders: zSignatureHeaders.default('x-signature'),
  })
  .strict()
  .describe('Webhook endpoint, as sent to create or replace one')
  .meta({ id: 'WebhookEndpointDefinition' })
export type WebhookEndpointInput = z.input<typeof zWebhookEndpointInput>
export type WebhookEndpointData = z.output<typeof zWebhookEndpointInput>

const endpointOutput = {
  id: zConfigId,
  description: z.string().nullable(),
  url: z.string(),
  auth: zEndpointAuth,
  createdAt: zTimestamp,
  updatedAt: zTimestamp,
}
export const zAttributeProvider = z
  .object({ ...endpointOutput, timeoutMs: z.number().int() })
  .meta({ id: 'AttributeProvider' })
export type AttributeProvider = z.infer<typeof zAttributeProvider>
export const zWebhookEndpoint = z
  .object({ ...endpointOutput, events: z.array(z.string()).nullable(), signatureHeaders: zSignatureHeaders })
  .meta({ id: 'WebhookEndpoint' })
export type WebhookEndpoint = z.infer<typeof zWebhookEndpoint>

/** Create and replace answers: the HMAC signing secret appears here once. */
export const withSigningSecret = <T extends z.ZodObject>(schema: T) =>
  schema.extend({
    signingSecret: z
      .string()
      .optional()
      .describe('HMAC signing secret: shown once, on create or when auth changes to hmac'),
  })
export const zAttributeProviderWithSecret = withSigningSecret(zAttributeProvider).meta({
  id: 'AttributeProviderWithSecret',
})
export const zWebhookEndpointWithSecret = withSigningSecret(zWebhookEndpoint).meta({
  id: 'WebhookEndpointWithSecret',
})
