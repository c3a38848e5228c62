import { z } from 'zod'
import { zTimestamp } from './common'
import { zConfigId } from './credential-config'

/**
 * A wallet provider the tenant trusts (OAuth 2.0 Attestation-Based Client Authentication, HAIP
 * §4.4.1; OpenID4VCI Appendix D): wallet and key attestations must chain to a certificate of the
 * trust lists it names (issue 25: PEM `trustAnchors` are only a deprecated input shorthand).
 */
export const zWalletProviderInput = z
  .object({
    id: zConfigId.describe('Wallet provider id'),
    name: z.string().min(1).max(200).describe('Display name of the wallet provider'),
    description: z.string().max(2000).optional(),
    trustAnchors: z
      .array(z.string().min(1).max(20_000))
      .max(20)
      .optional()
      .describe(
        'Deprecated (dropped in the next interface version): PEM certificates converted at save into a `pem` trust list `anchors-<12 hex of SHA-256 of the trimmed, sorted PEMs>` named in `trustListIds` (one list per set in the tenant; a certificate that does not parse is a 422). Never returned: name trust lists in `trustListIds` instead. A provider with neither `trustAnchors` nor `trustListIds` is a 422',
      ),
    trustListIds: z
      .array(zConfigId)
      .max(20)
      .optional()
      .describe(
        'Trust lists (`/api/trust-lists`) whose current certificates wallet and key attestations may chain to (the anchor itself must not be in the x5c); a list past NextUpdate + grace or not fetched yet contributes nothing (fail closed). An unknown id is a 422 naming it, and a named list cannot be deleted',
      ),
  })
  .strict()
  .describe('A trusted wallet provider, as sent to create or replace one')
  .meta({ id: 'WalletProviderDefinition' })
export type WalletProviderInput = z.input<typeof zWalletProviderInput>
export type WalletProviderData = z.output<typeof zWalletProviderInput>

export const zWalletProvider = zWalletProviderInput
  .omit({ trustAnchors: true })
  .extend({ description: z.string().nullable(), createdAt: zTimestamp, updatedAt: zTimestamp })
  .describe('A trusted wallet provider')
  .meta({ id: 'WalletProvider' })
export type WalletProvider = z.infer<typeof zWalletProvider>
