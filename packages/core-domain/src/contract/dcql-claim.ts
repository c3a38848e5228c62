import { z } from 'zod'

export const zQueryId = z.string().regex(/^[A-Za-z0-9_-]+$/, 'alphanumeric, "_" or "-" (OpenID4VP §6.1)')

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
export type DcqlClaimQuery = z.infer<typeof zDcqlClaim>
