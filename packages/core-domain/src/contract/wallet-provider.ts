import { z } from 'zod'
import { zTimestamp } from './common'
import { zConfigId } from './credential-config'

/**
 * A wallet provider the tenant trusts (OAuth 2.0 Attestation-Based Client Authentication, HAIP
 * §4.4.1; OpenID4VCI Appendix D): wallet and key attestations must chain to one of its anchors.
 */
export const zWalletProviderInput = z
  .object({
    id: zConfigId.describe('Wallet provider id'),
    name: z.string().min(1).max(200).describe('Display name of the wallet provider'),
    description: z.string().max(2000).optional(),
    trustAnchors: z
      .array(z.string().min(1).max(20_000))
      .min(1)
      .max(20)
      .describe(
        'PEM certificates that wallet and key attestations must chain to (a certificate that does not parse is a 422); the anchor itself must not be in the x5c',
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
