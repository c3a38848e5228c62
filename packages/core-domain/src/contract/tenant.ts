import { z } from 'zod'
import { zLocale } from '../formats/config-shape'
import { zCountryCode, zTimestamp } from './common'
import { zKeyChainId } from './key-chain'

/** Tenant ids appear in URLs (`/issuers/{tenant}`), so they are lowercase slugs. */
export const zTenantId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{1,62}$/, 'lowercase letters, digits, "-" and "_", 2 to 63 characters')
  .describe('Tenant identifier, used in URLs')

export const zPresentationRetention = z
  .enum(['keep', 'drop-after-delivery'])
  .describe('Verified presentation claims: kept on the session, or dropped once the webhook has them')
  .meta({ id: 'PresentationRetention' })

export const zCredentialEncryption = z
  .enum(['optional', 'required'])
  .describe(
    'Credential request and response encryption at the issuer (OpenID4VCI 1.0 §10): offered to wallets, or required of them',
  )
  .meta({ id: 'CredentialEncryption' })

/** A CSS colour as wallets read it: `#rgb` or `#rrggbb`. */
const zColor = z.string().regex(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'a colour as #rgb or #rrggbb')

/**
 * One entry of the issuer's `display` (OpenID4VCI 1.0 §12.2.4): its name, and a logo, for one
 * locale. The colours are extra members (the section defines them for credentials only), which
 * wallets that do not know them ignore.
 */
export const zIssuerDisplay = z
  .object({
    locale: zLocale.optional().describe('BCP 47 language tag of this entry; absent: any'),
    name: z.string().min(1).max(200).optional().describe('Issuer name shown to the holder'),
    logo: z
      .object({
        uri: z
          .url({ protocol: /^https?$/ })
          .max(2000)
          .describe('Logo URL: an uploaded logo (`POST /api/logos`) or any https image'),
        alt_text: z.string().min(1).max(200).optional().describe('Alternative text of the logo'),
      })
      .strict()
      .optional(),
    background_color: zColor.optional(),
    text_color: zColor.optional(),
  })
  .strict()
  .meta({ id: 'IssuerDisplay' })
export type IssuerDisplay = z.infer<typeof zIssuerDisplay>

/** Checklist I-10: at most one entry per locale (and one without). */
export const zIssuerDisplayList = z
  .array(zIssuerDisplay)
  .max(50)
  .superRefine((entries, ctx) => {
    const seen = new Set<string>()
    for (const [index, entry] of entries.entries()) {
      const locale = entry.locale?.toLowerCase() ?? ''
      if (seen.has(locale))
        ctx.addIssue({
          code: 'custom',
          path: [index, 'locale'],
          message: `a second display entry for ${entry.locale ? `locale ${entry.locale}` : 'no locale'}`,
        })
      seen.add(locale)
    }
  })
  .describe(
    "The issuer's `display` in its credential issuer metadata (OpenID4VCI 1.0 §12.2.4), one entry per locale",
  )

export const zTenant = z
  .object({
    id: zTenantId,
    name: z.string(),
    description: z.string().nullable(),
    presentationRetention: zPresentationRetention,
    credentialEncryption: zCredentialEncryption,
    country: zCountryCode
      .nullable()
      .describe(
        'Country of the issuing authority (ISO 3166-1 alpha-2): the `C=` of the default key chain made on first need, which mso_mdoc configurations need (ISO 18013-5 Annex B.1). Null: none stated',
      ),
    issuerDisplay: zIssuerDisplayList
      .nullable()
      .describe(
        "The issuer's `display` in its metadata (OpenID4VCI 1.0 §12.2.4); null: the tenant name alone",
      ),
    defaultKeyChainId: zKeyChainId
      .nullable()
      .describe(
        'Default signing key chain: signs credential configurations created without `keyChainId`. Null until set, or until the first such configuration creates one (`default`, the `POST /api/key-chains` `source: generate` defaults)',
      ),
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
  })
  .meta({ id: 'Tenant' })
export type Tenant = z.infer<typeof zTenant>

export const zTenantCreate = z
  .object({
    id: zTenantId.optional().describe('Tenant identifier; generated when absent'),
    name: z.string().min(1).max(200),
    description: z.string().max(2000).optional(),
    presentationRetention: zPresentationRetention.default('keep'),
    credentialEncryption: zCredentialEncryption.default('optional'),
    country: zCountryCode
      .optional()
      .describe(
        'Country of the issuing authority (ISO 3166-1 alpha-2), e.g. DE: the default key chain made on first need names it (`C=`), as mso_mdoc configurations require',
      ),
    issuerDisplay: zIssuerDisplayList.optional(),
  })
  .strict()
  .meta({ id: 'TenantCreate' })
export type TenantCreate = z.input<typeof zTenantCreate>

export const zTenantUpdate = z
  .object({
    name: z.string().min(1).max(200).optional(),
    description: z.string().max(2000).nullable().optional(),
    presentationRetention: zPresentationRetention.optional(),
    credentialEncryption: zCredentialEncryption.optional(),
    country: zCountryCode
      .nullable()
      .optional()
      .describe(
        'Country of the issuing authority (ISO 3166-1 alpha-2); null: none. Used by the default key chain made after this (an existing one keeps its certificates)',
      ),
    issuerDisplay: zIssuerDisplayList.nullable().optional(),
    defaultKeyChainId: zKeyChainId
      .nullable()
      .optional()
      .describe(
        'Make this key chain of the tenant its default signing key chain (422 when there is none by that id); null: no default, so the next configuration without `keyChainId` creates one',
      ),
  })
  .strict()
  .meta({ id: 'TenantUpdate' })
export type TenantUpdate = z.infer<typeof zTenantUpdate>

/** Image types a logo may have: what wallets render, nothing that runs. */
export const LOGO_CONTENT_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/svg+xml'] as const
/** Largest logo accepted, in bytes. */
export const LOGO_MAX_BYTES = 256 * 1024

export const zLogoUpload = z
  .object({
    contentType: z.enum(LOGO_CONTENT_TYPES),
    data: z
      .base64()
      .max(Math.ceil(LOGO_MAX_BYTES / 3) * 4, `at most ${LOGO_MAX_BYTES / 1024} KiB of image`)
      .describe('The image, base64'),
  })
  .strict()
  .meta({ id: 'LogoUpload' })
export type LogoUpload = z.infer<typeof zLogoUpload>

export const zLogo = z
  .object({
    uri: z
      .url()
      .describe(
        'Where the service serves it, for `issuerDisplay[].logo.uri`: the same URL always names the same image',
      ),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    contentType: z.enum(LOGO_CONTENT_TYPES),
    size: z.int().describe('Bytes'),
  })
  .meta({ id: 'Logo' })
export type Logo = z.infer<typeof zLogo>
