import { z } from 'zod'
import { zCountryCode, zTimestamp } from './common'

export const zKmsProvider = z
  .enum(['db', 'vault', 'aws-kms', 'pkcs11', 'azure-key-vault', 'gcp-kms'])
  .describe('Where the private key lives (spec §2.4)')
  .meta({ id: 'KmsProvider' })
export type KmsProvider = z.infer<typeof zKmsProvider>

export const zSigningAlgorithm = z
  .enum(['ES256', 'ES384', 'EdDSA'])
  .describe('JWS algorithm; ES256 is required by HAIP')
  .meta({ id: 'SigningAlgorithm' })
export type SigningAlgorithm = z.infer<typeof zSigningAlgorithm>

export const zKeyChainId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'letters, digits, ".", "_" and "-", up to 100 characters')
  .describe('Key chain identifier, referenced as `keyChainId`')

export const zCertificateMode = z
  .enum(['self-signed', 'internal-ca', 'provided', 'registrar', 'none'])
  .describe(
    'How the active certificate came to be: generated self-signed, issued by the chain’s root, given by the user, issued by the registrar (access certificate), or none',
  )
  .meta({ id: 'CertificateMode' })

export const zRotationPolicy = z
  .object({
    enabled: z.boolean().default(false).describe('Rotate automatically every `intervalDays`'),
    intervalDays: z.number().int().min(1).max(3650).default(90),
    gracePeriodDays: z
      .number()
      .int()
      .min(0)
      .max(365)
      .default(30)
      .describe('How long a rotated-out key stays published for verification'),
  })
  .strict()
  .meta({ id: 'RotationPolicy' })
export type RotationPolicy = z.infer<typeof zRotationPolicy>

const zPem = z.string().min(1).max(20_000).describe('PEM certificate')
const zCertificateChain = z.array(zPem).min(1).max(10).describe('PEM certificates, leaf first')
const zSubject = z.string().min(3).max(200).describe('Certificate subject DN, e.g. `CN=ACME issuer,O=ACME`')

export const zPublicKeyInfo = z
  .object({
    kid: z.string().describe('RFC 7638 thumbprint of the public key'),
    publicJwk: z.record(z.string(), z.unknown()).describe('Public JWK (never private material)'),
    certificateChain: z.array(z.string()).describe('PEM certificates, leaf first'),
  })
  .meta({ id: 'PublicKeyInfo' })

export const zKeyChain = z
  .object({
    id: zKeyChainId,
    description: z.string().nullable(),
    kmsProvider: zKmsProvider,
    externalKeyId: z
      .string()
      .nullable()
      .describe(
        'Key name in Vault, key id/ARN in AWS KMS, the key’s CKA_LABEL (or `id:<hex>` CKA_ID) on the PKCS#11 token, `name/version` in Azure Key Vault, or the Cloud KMS key version `projects/…/cryptoKeyVersions/N`; null for `db`',
      ),
    algorithm: zSigningAlgorithm,
    certificateMode: zCertificateMode,
    activeKey: zPublicKeyInfo,
    previousKey: zPublicKeyInfo
      .extend({ expiresAt: zTimestamp })
      .nullable()
      .describe('Rotated-out key, published until `expiresAt`'),
    rootCertificate: z
      .string()
      .nullable()
      .describe('Trust anchor of an internal CA (PEM); not part of `x5c`'),
    rotationPolicy: zRotationPolicy,
    rotatedAt: zTimestamp.nullable(),
    nextRotationAt: zTimestamp.nullable(),
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
  })
  .describe('Key chain (spec §2.4): public keys and certificates only')
  .meta({ id: 'KeyChain' })
export type KeyChain = z.infer<typeof zKeyChain>

const common = {
  id: zKeyChainId.optional().describe('Generated (`kc_…`) when absent'),
  description: z.string().max(2000).optional(),
  rotationPolicy: zRotationPolicy.optional(),
}

export const zKeyChainCreate = z
  .discriminatedUnion('source', [
    z
      .object({
        source: z
          .literal('generate')
          .describe(
            'A new key, certified by an internal CA of its own unless `certificate.mode` is `self-signed`',
          ),
        ...common,
        kmsProvider: z
          .enum(['db', 'pkcs11', 'azure-key-vault', 'gcp-kms'])
          .default('db')
          .describe(
            'Where the new key is made: in the database (`db`, default), on the PKCS#11 token (`pkcs11`: sensitive and not extractable), in Azure Key Vault (`azure-key-vault`: Create Key, `AZURE_KEY_VAULT_KEY_TYPE`, not exportable) or in Cloud KMS (`gcp-kms`: a new HSM key in `GCP_KMS_KEY_RING`). Its id in the provider is answered as `externalKeyId`; all but `db` need `certificate.mode` `internal-ca`',
          ),
        algorithm: zSigningAlgorithm.default('ES256'),
        certificate: z
          .object({
            mode: z
              .enum(['internal-ca', 'self-signed'])
              .default('internal-ca')
              .describe(
                '`internal-ca` (default): the leaf is issued by a root of this key chain, returned as `rootCertificate` and kept out of `x5c`, as HAIP wallets require (leaf not self-signed). `self-signed`: one self-signed certificate, for development only; credential configurations with `dpop` or `walletAttestation` `required` refuse such a key chain',
              ),
            subject: zSubject.optional().describe('Defaults to `CN=<tenant> <key chain id>`'),
            country: zCountryCode
              .optional()
              .describe(
                'Country of the issuing authority, added to the subject (and the root’s) as `C=` when it names none; mso_mdoc configurations need one (ISO 18013-5 Annex B.1)',
              ),
            validityDays: z.number().int().min(1).max(3650).default(365),
            dnsNames: z
              .array(z.string().min(1).max(253))
              .max(10)
              .optional()
              .describe(
                'SAN dNSName entries; default: the host of PUBLIC_URL. The leaf’s SAN also names the tenant’s credential issuer identifier as a URI, which the `iss` of SD-JWT VCs must match (SD-JWT VC §3.5)',
              ),
          })
          .strict()
          .optional(),
      })
      .strict()
      .meta({ id: 'KeyChainGenerate' }),
    z
      .object({
        source: z
          .literal('external')
          .describe(
            'Register a key held by Vault transit, AWS KMS, a PKCS#11 token, Azure Key Vault or Google Cloud KMS',
          ),
        ...common,
        kmsProvider: z.enum(['vault', 'aws-kms', 'pkcs11', 'azure-key-vault', 'gcp-kms']),
        externalKeyId: z
          .string()
          .min(1)
          .max(2048)
          .describe(
            'Vault transit key name, AWS KMS key id / ARN / alias, the PKCS#11 key’s CKA_LABEL (or `id:<hex>` for its CKA_ID), an Azure Key Vault key `name` (its current version is pinned: stored as `name/version`) or `name/version`, or a Cloud KMS key version `projects/…/locations/…/keyRings/…/cryptoKeys/…/cryptoKeyVersions/N`',
          ),
        certificateChain: zCertificateChain.optional(),
      })
      .strict()
      .meta({ id: 'KeyChainExternal' }),
    z
      .object({
        source: z
          .literal('import')
          .describe(
            'Import an existing private key into the database (`db`, default), into Azure Key Vault (`azure-key-vault`: Import Key, not exportable there) or into Cloud KMS (`gcp-kms`: an HSM key in `GCP_KMS_KEY_RING`, through an import job)',
          ),
        ...common,
        kmsProvider: z
          .enum(['db', 'azure-key-vault', 'gcp-kms'])
          .default('db')
          .describe(
            'Where the key is kept: encrypted in the database, or imported into AZURE_KEY_VAULT_URL (HSM-protected with AZURE_KEY_VAULT_KEY_TYPE EC-HSM) or into a new HSM key in GCP_KMS_KEY_RING, which signs with it from then on; the service keeps only its public part',
          ),
        privateKey: z
          .union([
            z.string().min(1).max(20_000).describe('PEM (PKCS#8 or SEC1)'),
            z.record(z.string(), z.unknown()).describe('private JWK'),
          ])
          .describe('Private key; stored encrypted and never returned'),
        certificateChain: zCertificateChain.optional(),
      })
      .strict()
      .meta({ id: 'KeyChainImport' }),
  ])
  .meta({ id: 'KeyChainCreate' })
export type KeyChainCreate = z.infer<typeof zKeyChainCreate>

export const zKeyChainUpdate = z
  .object({
    description: z.string().max(2000).nullable().optional(),
    rotationPolicy: zRotationPolicy.optional(),
    certificateChain: zCertificateChain
      .optional()
      .describe('Replaces the active key’s chain; the leaf must certify the active key'),
  })
  .strict()
  .meta({ id: 'KeyChainUpdate' })
export type KeyChainUpdate = z.infer<typeof zKeyChainUpdate>

export const zKeyChainRotate = z
  .object({
    externalKeyId: z
      .string()
      .min(1)
      .max(2048)
      .optional()
      .describe(
        'External key chains: the new key in the provider (required for them, refused for `db`; a key chain generated on a PKCS#11 token gets a new token key when absent)',
      ),
  })
  .strict()
  .meta({ id: 'KeyChainRotate' })
export type KeyChainRotate = z.infer<typeof zKeyChainRotate>
