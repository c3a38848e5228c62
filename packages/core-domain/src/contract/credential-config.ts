import { z } from 'zod'
import { CREDENTIAL_FORMATS, configSchemas, formatList } from '../formats/registry'
import { zClaimField } from './claim-field'
import { zTimestamp } from './common'
import { zKeyChainId } from './key-chain'

export const zConfigId = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/,
    'letters, digits, ".", "_", ":" and "-", up to 128 characters',
  )

export const zCredentialFormat = z
  .enum(CREDENTIAL_FORMATS)
  .describe(formatList)
  .meta({ id: 'CredentialFormat' })
export type CredentialFormat = z.infer<typeof zCredentialFormat>

export type { ClaimField, FieldDisplay, FieldType } from './claim-field'
export { zClaimField, zFieldDisplay, zFieldType } from './claim-field'

/**
 * IssuerMetadataCredentialConfig (spec §2.2): one member per format, told apart by `format`
 * (`dc+sd-jwt` names its `vct`, `mso_mdoc` its `docType`); the members are in core-domain/src/formats.
 */
export const zIssuerMetadataConfig = z
  .discriminatedUnion('format', configSchemas)
  .meta({ id: 'IssuerMetadataCredentialConfig' })
export type IssuerMetadataConfig = z.infer<typeof zIssuerMetadataConfig>
/** The `config` of a configuration of format `F`. */
export type IssuerMetadataConfigOf<F extends CredentialFormat> = Extract<IssuerMetadataConfig, { format: F }>

/** What fills a field at login: a claim name (OpenID provider) or a claims path (presentation). */
export const zLoginClaimSource = z.union([
  z.string().min(1).max(200),
  z
    .array(z.union([z.string().min(1).max(200), z.number().int().min(0), z.null()]))
    .min(1)
    .max(20),
])
export type LoginClaimSource = z.infer<typeof zLoginClaimSource>

/** Key attestation policy of a configuration (OpenID4VCI 1.0 Appendix D, §12.2.4 `key_attestations_required`). */
export const zKeyAttestationPolicy = z
  .object({
    required: z.boolean().describe('Proofs must carry a key attestation from a trusted wallet provider'),
    keyStorage: z
      .array(z.string().min(1).max(100))
      .min(1)
      .max(20)
      .optional()
      .describe('Accepted `key_storage` values (e.g. `iso_18045_high`); the attestation must name one'),
    userAuthentication: z
      .array(z.string().min(1).max(100))
      .min(1)
      .max(20)
      .optional()
      .describe('Accepted `user_authentication` values; the attestation must name one'),
  })
  .strict()
  .describe(
    'Key attestation requirements (OpenID4VCI 1.0 Appendix D); attestations come with proofs, so this needs `keyBinding: true` (422 otherwise)',
  )
  .meta({ id: 'KeyAttestationPolicy' })
export type KeyAttestationPolicy = z.infer<typeof zKeyAttestationPolicy>

/** Descriptions shared by the input (with defaults) and the stored configuration. */
const DESCRIBE = {
  lifetimeSeconds: 'Validity of issued credentials',
  keyBinding: 'Bind credentials to a holder key (proof required)',
  statusManagement: 'Give credentials a status list entry (revocation)',
  batchSize:
    'Credentials per request at most (one per proof key). The issuer metadata advertises one `batch_credential_issuance.batch_size` for the whole tenant (OpenID4VCI 1.0 §12.2.4): the smallest `batchSize` of its key-bound configurations, and none when that is 1',
  refreshTokens:
    'Hand out rotated one-time refresh tokens with the access token, in the authorization code and the pre-authorized code flow (a wallet then keeps polling a deferred credential beyond its 300 s access token)',
  dpop: 'DPoP (RFC 9449) at the token endpoint: `required` refuses token requests without a DPoP proof (HAIP)',
  walletAttestation:
    'Wallet attestation client authentication (`attest_jwt_client_auth`) at the token endpoint: `required` refuses wallets without one',
} as const

/** Credential configuration, version 2 (spec §2.1): field-based. */
export const zCredentialConfigInput = z
  .object({
    // Sent by clients written to the 5.0 interface elsewhere: 2 is this model, anything else is not.
    configVersion: z
      .literal(2, {
        error:
          'configVersion must be 2 (the field-based model of spec §2.1); version 1 configurations (claims model) are converted with `npm run config:migrate`',
      })
      .optional()
      .describe('The configuration model: 2 (field-based, spec §2.1), the only one; may be left out'),
    id: zConfigId.describe('Configuration id: the `credential_configuration_id` wallets ask for'),
    description: z.string().max(2000).optional(),
    config: zIssuerMetadataConfig,
    fields: z.array(zClaimField).min(1).max(500),
    keyChainId: zKeyChainId
      .optional()
      .describe(
        "Key chain that signs these credentials. Left out: on create, the tenant's default signing key chain (`defaultKeyChainId` of the tenant; created on first need with the `POST /api/key-chains` `source: generate` defaults, id `default`), named in the `X-Default-Key-Chain` answer header; on replace, the configuration's current key chain",
      ),
    attributeProviderId: zConfigId
      .optional()
      .describe('Where claims come from at issuance (replaces `claimsWebhook`)'),
    webhookEndpointId: zConfigId
      .optional()
      .describe('Where issuance notifications go (replaces `notificationWebhook`)'),
    lifetimeSeconds: z
      .number()
      .int()
      .min(60)
      .max(10 * 365 * 86_400)
      .default(365 * 86_400)
      .describe(DESCRIBE.lifetimeSeconds),
    keyBinding: z.boolean().default(true).describe(DESCRIBE.keyBinding),
    statusManagement: z.boolean().default(false).describe(DESCRIBE.statusManagement),
    batchSize: z.number().int().min(1).max(100).default(1).describe(DESCRIBE.batchSize),
    userAuthentication: z
      .object({
        loginProviderId: zConfigId.describe('The login provider that authenticates the holder'),
        claims: z
          .record(z.string().min(1).max(500), zLoginClaimSource)
          .optional()
          .describe(
            "Field path joined by '.' (e.g. `address.locality`) → what fills it. An `openid` provider: the ID token or userinfo claim name. A `presentation` provider: the claim's path in the presented credential, as a DCQL claims path (OpenID4VP 1.0 §7, e.g. `[\"family_name\"]` for SD-JWT VC, `[\"eu.europa.ec.eudi.pid.1\", \"family_name\"]` for mdoc) or a string joined by '.'; it must be a claim the presentation configuration's DCQL query asks for, and of the field's type when the tenant issues that credential type itself (422 otherwise)",
          ),
      })
      .strict()
      .optional()
      .describe(
        'Authorization code flow (OpenID4VCI §5): the holder logs in at this provider (an upstream OpenID provider, or a presentation of another credential for a provider of kind `presentation`); its claims fill the fields, and the attribute provider (when set) is then asked with the user and the presented claims. Offers for such a configuration use grant `authorization_code` and carry no claims for it',
      ),
    refreshTokens: z.boolean().default(false).describe(DESCRIBE.refreshTokens),
    dpop: z.enum(['optional', 'required']).default('optional').describe(DESCRIBE.dpop),
    walletAttestation: z
      .enum(['optional', 'required'])
      .default('optional')
      .describe(DESCRIBE.walletAttestation),
    keyAttestation: zKeyAttestationPolicy.optional(),
  })
  .strict()
  .describe('Credential configuration, version 2 (spec §2.1), as sent to create or replace one')
  .meta({ id: 'CredentialConfigDefinition' })
export type CredentialConfigInput = z.input<typeof zCredentialConfigInput>
/** A configuration as sent: `keyChainId` may be left out (the tenant's default key chain). */
export type CredentialConfigBody = z.output<typeof zCredentialConfigInput>
/** A configuration with its key chain resolved: what is checked and stored. */
export type CredentialConfigData = Omit<CredentialConfigBody, 'keyChainId'> & { keyChainId: string }

export const zCredentialConfig = zCredentialConfigInput
  .extend({
    lifetimeSeconds: z.number().int().describe(DESCRIBE.lifetimeSeconds),
    keyBinding: z.boolean().describe(DESCRIBE.keyBinding),
    statusManagement: z.boolean().describe(DESCRIBE.statusManagement),
    batchSize: z.number().int().describe(DESCRIBE.batchSize),
    refreshTokens: z.boolean().describe(DESCRIBE.refreshTokens),
    dpop: z.enum(['optional', 'required']).describe(DESCRIBE.dpop),
    walletAttestation: z.enum(['optional', 'required']).describe(DESCRIBE.walletAttestation),
    keyChainId: zKeyChainId.describe('Key chain that signs these credentials'),
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
  })
  .describe('A stored credential configuration (spec §2.1)')
  .meta({ id: 'CredentialConfig' })

/** JSON Schema (2020-12) of a configuration's claims, derived from its `fields` at request time. */
export const zClaimsJsonSchema = z
  .record(z.string(), z.unknown())
  .describe('JSON Schema of the claims, derived from `fields` (never stored)')
  .meta({ id: 'ClaimsJsonSchema' })
export type CredentialConfig = z.infer<typeof zCredentialConfig>
