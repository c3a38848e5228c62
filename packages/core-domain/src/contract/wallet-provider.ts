import { z } from 'zod'
import { zTimestamp } from './common'
import { zConfigId } from './credential-config'

/**
 * A wallet provider the tenant trusts (OAuth 2.0 Attestation-Based Client Authentication, HAIP
 * §4.4.1; OpenID4VCI Appendix D): wallet and key attestations must chain to one of its anchors,
 * given in PEM or by the trust lists it names.
 */
export const zWalletProviderInput = z
  .object({
    id: zConfigId.describe('Wallet provider id'),
    name: z.string().min(1).max(200).describe('Display name of the wallet provider'),
    description: z.string().max(2000).optional(),
    trustAnchors: z
      .array(z.string().min(1).max(20_000))
      .max(20)
      .default([])
      .describe(
        'PEM certificates that wallet and key attestations must chain to (a certificate that does not parse is a 422); the anchor itself must not be in the x5c. May be empty when `trustListIds` names a list; a provider with neither is a 422',
      ),
    trustListIds: z
      .array(zConfigId)
      .max(20)
      .optional()
      .describe(
        'Trust lists (`/api/trust-lists`) whose current certificates wallet and key attestations may also chain to, besides `trustAnchors`; a list past NextUpdate + grace or not fetched yet contributes nothing (fail closed). An unknown id is a 422 naming it, and a named list cannot be deleted',
      ),
  })
  .strict()
  .describe('A trusted wallet provider, as sent to create or replace one')
  .meta({ id: 'WalletProviderDefinition' })
export type WalletProviderInput = z.input<typeof zWalletProviderInput>
export type WalletProviderData = z.output<typeof zWalletProviderInput>

export const zWalletProvider = zWalletProviderInput
  .extend({ description: z.string().nullable(), createdAt: zTimestamp, updatedAt: zTimestamp })
  .describe('A trusted wallet provider')
  .meta({ id: 'WalletProvider' })
export type WalletProvider = z.infer<typeof zWalletProvider>
