import { z } from 'zod'
import { zCredentialFormat } from './credential-config'

const zQueryId = z.string().regex(/^[A-Za-z0-9_-]+$/, 'alphanumeric, "_" or "-" (OpenID4VP §6.1)')

/** Claims path pointer (OpenID4VP §7): strings select keys, integers array elements, null all elements. */
const zClaimsPath = z
  .array(z.union([z.string(), z.int().min(0), z.null()]))
  .min(1)
  .max(20)

export const zDcqlClaim = z
  .object({
    id: zQueryId.optional(),
    path: zClaimsPath,
    values: z
      .array(z.union([z.string(), z.number(), z.boolean()]))
      .min(1)
      .max(50)
      .optional(),
    intent_to_retain: z.boolean().optional().describe('mso_mdoc only'),
  })
  .strict()
  .meta({ id: 'DcqlClaimQuery' })

export const zDcqlCredentialQuery = z
  .object({
    id: zQueryId,
    format: zCredentialFormat,
    multiple: z.boolean().optional(),
    meta: z.union([
      z.object({ vct_values: z.array(z.string().min(1)).min(1).max(20) }).strict(),
      z.object({ doctype_value: z.string().min(1) }).strict(),
      // OpenID4VP 1.0 B.1.1: "A non-empty array of string arrays", each a non-empty set of types.
      z
        .object({
          type_values: z
            .array(z.array(z.string().min(1).max(500)).min(1).max(20))
            .min(1)
            .max(20),
        })
        .strict(),
    ]),
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
