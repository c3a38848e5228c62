import { z } from 'zod'
import { zTimestamp } from './common'
import { zConfigId } from './credential-config'
import { zDcqlQuery } from './dcql'
import { zKeyChainId } from './key-chain'

export const zPresentationConfigInput = z
  .object({
    id: zConfigId,
    description: z.string().max(2000).optional(),
    dcqlQuery: zDcqlQuery.describe('What to ask the wallet for (OpenID4VP 1.0 §6)'),
    lifetimeSeconds: z
      .number()
      .int()
      .min(30)
      .max(86_400)
      .default(300)
      .describe('How long a request stays answerable'),
    responseMode: z
      .enum(['direct_post', 'direct_post.jwt'])
      .default('direct_post.jwt')
      .describe('HAIP asks for direct_post.jwt'),
    transactionDataTypes: z
      .array(z.string().min(1).max(200))
      .max(20)
      .optional()
      .describe('Transaction data types requests may carry'),
    webhookEndpointId: zConfigId.optional().describe('Where results are delivered'),
    redirectUri: z
      .url()
      .optional()
      .describe(
        'Same-device flows: where the wallet sends the user back. https (http only where OUTBOUND_ALLOW_HTTP is set), no fragment',
      ),
    keyChainId: zKeyChainId.describe('Key chain that signs request objects'),
    clientIdPrefix: z
      .enum(['x509_san_dns', 'x509_hash'])
      .default('x509_san_dns')
      .describe(
        'Client identifier prefix (OpenID4VP §5.9.3): the SAN dNSName of the signing certificate, or the hash of it',
      ),
    trustAnchors: z
      .array(z.string().min(1).max(20_000))
      .max(50)
      .optional()
      .describe('PEM certificates credential issuers must chain to, besides the tenant’s own key chains'),
    acceptAnyIssuer: z
      .boolean()
      .default(false)
      .describe(
        'Development only: accept credentials whose issuer chains to no trust anchor, and SD-JWT VCs whose iss is not a SAN of the x5c leaf (the signature is still checked)',
      ),
  })
  .strict()
  .describe('Presentation configuration, as sent to create or replace one')
  .meta({ id: 'PresentationConfigDefinition' })
export type PresentationConfigInput = z.input<typeof zPresentationConfigInput>
export type PresentationConfigData = z.output<typeof zPresentationConfigInput>

export const zPresentationConfig = zPresentationConfigInput
  .extend({
    lifetimeSeconds: z.number().int(),
    responseMode: z.enum(['direct_post', 'direct_post.jwt']),
    clientIdPrefix: z.enum(['x509_san_dns', 'x509_hash']),
    acceptAnyIssuer: z.boolean(),
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
  })
  .describe('A stored presentation configuration')
  .meta({ id: 'PresentationConfig' })
export type PresentationConfig = z.infer<typeof zPresentationConfig>

export const zPresentationRequestCreate = z
  .object({
    presentationConfigId: zConfigId,
    responseMode: z
      .enum(['direct_post', 'direct_post.jwt'])
      .optional()
      .describe('Overrides the configuration'),
    transactionData: z
      .array(z.object({ type: z.string().min(1), credential_ids: z.array(z.string()).min(1) }).loose())
      .max(10)
      .optional()
      .describe('Transaction data objects (OpenID4VP §5.1); each type must be allowed by the configuration'),
    redirectUri: z
      .url()
      .optional()
      .describe(
        'Same-device flows: where the wallet sends the user after responding. https (http only where OUTBOUND_ALLOW_HTTP is set), no fragment',
      ),
    webhookEndpointId: zConfigId
      .optional()
      .describe('Overrides the configuration; a webhook endpoint of the same tenant'),
    lifetimeSeconds: z.number().int().min(30).max(86_400).optional().describe('Overrides the configuration'),
  })
  .strict()
  .meta({ id: 'PresentationRequestCreate' })
export type PresentationRequestCreate = z.output<typeof zPresentationRequestCreate>

export const zPresentationRequestCreated = z
  .object({
    sessionId: z.string(),
    clientId: z.string().describe('Client identifier with its prefix'),
    requestUri: z.string(),
    requestUriMethod: z.literal('post'),
    authorizationRequestUri: z
      .string()
      .describe('`openid4vp://` URI for a QR code (cross-device) or a link (same-device)'),
    expiresAt: zTimestamp,
  })
  .meta({ id: 'PresentationRequestCreated' })
export type PresentationRequestCreated = z.infer<typeof zPresentationRequestCreated>

export const zPresentationSession = z
  .object({
    id: z.string(),
    kind: z.literal('presentation'),
    status: z.enum(['pending', 'verified', 'failed', 'expired']),
    presentationConfigId: z.string(),
    failureReason: z.string().nullable(),
    claims: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe(
        'Disclosed claims per DCQL credential id, in single-session reads. Null before a verified response, in lists, once dropped by retention, and always when `responseCodeRequired`: such claims are released once, by `POST /api/sessions/{id}/result` with the response code',
      ),
    responseCodeRequired: z
      .boolean()
      .describe(
        'Same-device flow (OpenID4VP §8.2, HAIP): the wallet was redirected with a `response_code`, and only that code releases the claims (session fixation, OpenID4VP §14.3)',
      ),
    delivery: z
      .object({
        status: z.enum(['none', 'pending', 'delivered', 'failed']),
        attempts: z.number().int(),
        error: z.string().nullable(),
      })
      .describe('Delivery of the result to the webhook endpoint'),
    createdByClientId: z.string(),
    expiresAt: zTimestamp,
    requestFetchedAt: zTimestamp.nullable(),
    responseReceivedAt: zTimestamp.nullable(),
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
  })
  .meta({ id: 'PresentationSession' })
export type PresentationSession = z.infer<typeof zPresentationSession>
