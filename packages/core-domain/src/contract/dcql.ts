import { z } from 'zod'
import { dcqlMetaSchemas } from '../formats/registry'
import { zCredentialFormat } from './credential-config'
import { zDcqlClaim, zQueryId } from './dcql-claim'

export { zDcqlClaim } from './dcql-claim'

export const zDcqlCredentialQuery = z
  .object({
    id: zQueryId,
    format: zCredentialFormat,
    multiple: z.boolean().optional(),
    // Each format's own `meta` (OpenID4VP 1.0 Appendix B), from its folder in formats/.
    meta: z.union(dcqlMetaSchemas),
    trusted_authorities: z
      .array(
        z.object({ type: z.string().min(1), values: z.array(z.string().min(1)).min(1).max(100) }).strict(),
      )
      .min(1)
      .max(20)
      .optional(),
    require_cryptographic_holder_binding: z.boolean().optional(),
    claims: z.array(zDcqlClaim).min(1).max(100).optional(),
    claim_sets: z.array(z.array(zQueryId).min(1).max(100)).min(1).max(20).optional(),
  })
  .strict()
  .meta({ id: 'DcqlCredentialQuery' })

export const zDcqlCredentialSet = z
  .object({
    options: z.array(z.array(zQueryId).min(1).max(50)).min(1).max(20),
    required: z.boolean().optional(),
  })
  .strict()
  .meta({ id: 'DcqlCredentialSetQuery' })

/** DCQL query (OpenID4VP 1.0 §6), shape only; `checkDcqlQuery` applies the cross-reference rules. */
export const zDcqlQuery = z
  .object({
    credentials: z.array(zDcqlCredentialQuery).min(1).max(50),
    credential_sets: z.array(zDcqlCredentialSet).min(1).max(50).optional(),
  })
  .strict()
  .meta({ id: 'DcqlQuery' })
export type DcqlQuery = z.infer<typeof zDcqlQuery>
export type DcqlCredentialQuery = DcqlQuery['credentials'][number]
