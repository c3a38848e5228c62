import { z } from 'zod'
import { zTimestamp } from './common'
import { zConfigId } from './credential-config'
import { zStatusHandle } from './credential-status'

export const PRE_AUTHORIZED_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:pre-authorized_code'
export const AUTHORIZATION_CODE_GRANT = 'authorization_code'

export const zTxCodeSpec = z
  .object({
    inputMode: z.enum(['numeric', 'text']).default('numeric'),
    length: z.number().int().min(4).max(12).default(6),
    description: z
      .string()
      .max(300)
      .optional()
      .describe('Shown by the wallet (OpenID4VCI §4.1.1: at most 300 characters)'),
    value: z
      .string()
      .min(4)
      .max(12)
      .optional()
      .describe('The code to require; generated and returned once when absent'),
  })
  .strict()
  .meta({ id: 'TxCodeSpec' })

/**
 * Lifetime of the issuer's access tokens (5 minutes): the token endpoint signs them so, and the
 * expiry sweep counts a redeemed offer abandoned only once its token expired too.
 */
export const ACCESS_TOKEN_SECONDS = 300

export const zOfferCreate = z
  .object({
    credentialConfigurationIds: z
      .array(zConfigId)
      .min(1)
      .max(20)
      .refine((ids) => new Set(ids).size === ids.length, 'configuration ids must not repeat'),
    grant: z
      .enum(['pre-authorized_code', 'authorization_code', 'both'])
      .default('pre-authorized_code')
      .describe(
        'Grant(s) of the offer (OpenID4VCI §4.1.1): `authorization_code` gives the wallet an `issuer_state` to start the authorization code flow with; `both` offers either',
      ),
    txCode: zTxCodeSpec.optional().describe('Require a transaction code sent to the holder out of band'),
    authorizationServerId: zConfigId
      .optional()
      .describe(
        'The external authorization server (`/api/auth-servers`) the wallet is to use for the `authorization_code` grant; its issuer is named in the grant as `authorization_server` (OpenID4VCI 1.0 §4.1.1). Without it, while the tenant has external servers, the grant names the credential issuer itself. Unknown id, or a `pre-authorized_code` offer: 422',
      ),
    claims: z
      .record(zConfigId, z.record(z.string(), z.unknown()))
      .optional()
      .describe('Claims per configuration id; without them, the configuration’s attribute provider is asked'),
    lifetimeSeconds: z.number().int().min(60).max(86_400).default(600),
    byReference: z
      .boolean()
      .default(true)
      .describe('Offer by reference (`credential_offer_uri`) or by value'),
    statusHandle: zStatusHandle
      .optional()
      .describe(
        'Your reference for the credentials of this offer (a contract or case number, never personal data): kept with their status list entries, to revoke, suspend or reinstate them with `POST /api/credential-status`',
      ),
  })
  .strict()
  .meta({ id: 'OfferCreate' })
export type OfferCreate = z.output<typeof zOfferCreate>

export const zOfferCreated = z
  .object({
    sessionId: z.string(),
    credentialOffer: z.record(z.string(), z.unknown()).describe('The offer object (OpenID4VCI §4.1.1)'),
    offerUri: z.string().describe('`openid-credential-offer://` URI for a QR code or a link'),
    credentialOfferUri: z.string().nullable(),
    txCode: z.string().nullable().describe('The generated transaction code, shown once'),
    expiresAt: zTimestamp,
  })
  .meta({ id: 'OfferCreated' })
export type OfferCreated = z.infer<typeof zOfferCreated>

export const ISSUANCE_STATUSES = [
  'offered',
  'token_issued',
  'credential_issued',
  'completed',
  'failed',
  'expired',
] as const
export const zIssuanceStatus = z.enum(ISSUANCE_STATUSES).meta({ id: 'IssuanceStatus' })

export const zIssuanceSession = z
  .object({
    id: z.string(),
    kind: z.literal('issuance'),
    status: zIssuanceStatus,
    credentialConfigurationIds: z.array(z.string()),
    issuedConfigurationIds: z.array(z.string()),
    txCodeRequired: z.boolean(),
    byReference: z.boolean(),
    failureReason: z.string().nullable(),
    createdByClientId: z.string(),
    expiresAt: zTimestamp,
    offerFetchedAt: zTimestamp.nullable(),
    tokenIssuedAt: zTimestamp.nullable(),
    credentialIssuedAt: zTimestamp.nullable(),
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
    notifications: z
      .array(
        z.object({
          credentialConfigurationId: z.string(),
          event: z.enum(['credential_accepted', 'credential_failure', 'credential_deleted']).nullable(),
          receivedAt: zTimestamp.nullable(),
          delivery: z.object({
            status: z.enum(['none', 'pending', 'delivered', 'failed']),
            attempts: z.number().int(),
            error: z.string().nullable(),
          }),
        }),
      )
      .optional()
      .describe(
        'Wallet notifications (OpenID4VCI §11) and their webhook delivery; in single-session reads only',
      ),
  })
  .meta({ id: 'IssuanceSession' })
export type IssuanceSession = z.infer<typeof zIssuanceSession>

/**
 * The `authorization_server` of each grant (OpenID4VCI 1.0 §4.1.1): only while the metadata lists
 * more than one (the issuer and `external` servers); the pre-authorized code grant is always the
 * issuer's own, the authorization code grant the chosen server's (the issuer's when none is).
 */
export function offerGrantServers(issuer: string, external: number, chosen?: string | null) {
  if (external === 0) return undefined
  return { preAuthorized: issuer, authorizationCode: chosen ?? issuer }
}

/**
 * The credential offer object (OpenID4VCI §4.1.1): the pre-authorized code grant when `code` is
 * set, the authorization code grant when `issuerState` is; `servers` from offerGrantServers.
 */
export function buildCredentialOffer(
  issuer: string,
  ids: string[],
  code: string | null,
  txCode: { inputMode: string; length: number; description?: string | undefined } | null | undefined,
  issuerState?: string | null,
  servers?: { preAuthorized: string; authorizationCode: string },
): Record<string, unknown> {
  const server = (name: string | undefined) => (name ? { authorization_server: name } : {})
  return {
    credential_issuer: issuer,
    credential_configuration_ids: ids,
    grants: {
      ...(issuerState
        ? {
            [AUTHORIZATION_CODE_GRANT]: { issuer_state: issuerState, ...server(servers?.authorizationCode) },
          }
        : {}),
      ...(code === null ? {} : preAuthorizedGrant(code, txCode, server(servers?.preAuthorized))),
    },
  }
}

function preAuthorizedGrant(
  code: string,
  txCode: { inputMode: string; length: number; description?: string | undefined } | null | undefined,
  server: { authorization_server?: string },
) {
  return {
    [PRE_AUTHORIZED_CODE_GRANT]: {
      ...server,
      'pre-authorized_code': code,
      ...(txCode
        ? {
            tx_code: {
              input_mode: txCode.inputMode,
              length: txCode.length,
              ...(txCode.description ? { description: txCode.description } : {}),
            },
          }
        : {}),
    },
  }
}
