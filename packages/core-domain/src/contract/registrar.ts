import { z } from 'zod'
import { zTimestamp } from './common'
import { zConfigId } from './credential-config'
import { zKeyChainId } from './key-chain'

/** Where and as whom the tenant talks to its national registrar (docs/registrar.md). */
export const zRegistrarConfigInput = z
  .object({
    baseUrl: z
      .url()
      .max(2000)
      .describe('Base URL of the registrar API, e.g. `https://registrar.example.eu/api`'),
    tokenUrl: z
      .url()
      .max(2000)
      .describe('OAuth 2.0 token endpoint that issues registrar access tokens (client credentials grant)'),
    clientId: z.string().min(1).max(200).describe('Client id at the registrar’s token endpoint'),
    clientSecret: z
      .string()
      .min(1)
      .max(2000)
      .optional()
      .describe(
        'Client secret; stored encrypted and never returned. Required the first time; omitted on a later PUT, the stored one is kept',
      ),
  })
  .strict()
  .meta({ id: 'RegistrarConfigDefinition' })
export type RegistrarConfigInput = z.infer<typeof zRegistrarConfigInput>

export const zRegistrarRelyingParty = z
  .object({
    id: z.string().describe('Identifier the registrar gave the tenant'),
    name: z.string(),
    roles: z.array(z.enum(['verifier', 'issuer'])),
    registeredAt: zTimestamp,
  })
  .meta({ id: 'RegistrarRelyingParty' })

export const zRegistrarConfig = z
  .object({
    baseUrl: z.string(),
    tokenUrl: z.string(),
    clientId: z.string(),
    relyingParty: zRegistrarRelyingParty
      .nullable()
      .describe('The tenant’s registration at the registrar; null until registered'),
    createdAt: zTimestamp,
    updatedAt: zTimestamp,
  })
  .describe('The tenant’s registrar connection; the client secret is never returned')
  .meta({ id: 'RegistrarConfig' })
export type RegistrarConfig = z.infer<typeof zRegistrarConfig>

const zIdentifier = z.string().min(1).max(100)

export const zRelyingPartyRegistration = z
  .object({
    name: z.string().min(1).max(200).describe('Legal name of the tenant as the registrar records it'),
    roles: z
      .array(z.enum(['verifier', 'issuer']))
      .min(1)
      .max(2)
      .default(['verifier'])
      .describe('Register as relying party (`verifier`), as attestation provider (`issuer`), or both'),
    identifiers: z
      .object({
        LEI: zIdentifier.optional(),
        EUID: zIdentifier.optional(),
        VAT: zIdentifier.optional(),
        EORI: zIdentifier.optional(),
        TAX: zIdentifier.optional(),
        NTR: zIdentifier.optional(),
      })
      .strict()
      .optional()
      .describe('Legal-person identifiers (CIR 2025/848 Annex I)'),
  })
  .strict()
  .meta({ id: 'RelyingPartyRegistration' })
export type RelyingPartyRegistration = z.infer<typeof zRelyingPartyRegistration>

export const zAccessCertificateRequest = z
  .object({
    keyChainId: zKeyChainId.describe('Key chain whose active public key the certificate is for'),
    dnsNames: z
      .array(z.string().min(1).max(253))
      .min(1)
      .max(10)
      .optional()
      .describe('SAN dNSName entries to ask for; default: the key chain’s (the host of PUBLIC_URL)'),
  })
  .strict()
  .meta({ id: 'AccessCertificateRequest' })
export type AccessCertificateRequest = z.infer<typeof zAccessCertificateRequest>

export const zAccessCertificate = z
  .object({
    keyChainId: zKeyChainId,
    registrarCertificateId: z.string().describe('Identifier of the certificate at the registrar'),
    certificateChain: z
      .array(z.string())
      .describe('Stored on the key chain: PEM, leaf first, without the registrar’s root'),
  })
  .meta({ id: 'AccessCertificate' })
export type AccessCertificate = z.infer<typeof zAccessCertificate>

export const zRegistrationCertificateRequest = z
  .object({
    presentationConfigId: zConfigId.describe('Presentation configuration whose DCQL query is registered'),
    purpose: z
      .array(z.object({ lang: z.string().min(2).max(35), content: z.string().min(1).max(1000) }).strict())
      .min(1)
      .max(20)
      .describe('Why the credentials are asked for, per language (shown by wallets)'),
    privacyPolicyUri: z.url().max(2000),
    supportUri: z.string().min(1).max(2000).describe('Email address, phone number or URL for questions'),
  })
  .strict()
  .meta({ id: 'RegistrationCertificateRequest' })
export type RegistrationCertificateRequest = z.infer<typeof zRegistrationCertificateRequest>

export const zRegistrationCertificate = z
  .object({
    presentationConfigId: zConfigId,
    registrarCertificateId: z.string(),
    jwt: z.string().describe('The registration certificate, sent as `verifier_info` in request objects'),
    expiresAt: zTimestamp.nullable(),
    createdAt: zTimestamp,
  })
  .meta({ id: 'RegistrationCertificate' })
export type RegistrationCertificate = z.infer<typeof zRegistrationCertificate>
