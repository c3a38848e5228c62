import { z } from 'zod'
import { zLocale } from '../formats/config-shape'

/** Field labels: both shapes of spec §2.3 are accepted, `{name, locale}` and FieldDisplayDto `{lang, label}`. */
export const zFieldDisplay = z
  .union([
    z
      .object({ name: z.string().min(1).max(200), locale: zLocale })
      .strict()
      .meta({ id: 'LocalizedName' }),
    z
      .object({ lang: zLocale, label: z.string().min(1).max(200) })
      .strict()
      .meta({ id: 'FieldDisplayDto' }),
  ])
  .meta({ id: 'FieldDisplay' })
export type FieldDisplay = z.infer<typeof zFieldDisplay>

export const zFieldType = z
  .enum(['string', 'number', 'integer', 'boolean', 'date', 'date-time', 'array', 'object'])
  .describe('Value type of the claim')
  .meta({ id: 'FieldType' })
export type FieldType = z.infer<typeof zFieldType>

/** ClaimFieldDefinitionDto (spec §2.3): one entry per leaf claim. */
export const zClaimField = z
  .object({
    path: z
      .array(z.string().min(1).max(200))
      .min(1)
      .max(10)
      .describe('Path of the claim, e.g. `["address", "street"]`'),
    type: zFieldType,
    defaultValue: z.unknown().optional().describe('Value issued when no other source gives one'),
    mandatory: z.boolean().optional().describe('Unset or false: optional'),
    disclosable: z
      .boolean()
      .optional()
      .describe('Selectively disclosable (SD-JWT) / individually released (mdoc)'),
    namespace: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('mso_mdoc only: namespace of the element; required there'),
    display: z.array(zFieldDisplay).max(50).optional(),
  })
  .strict()
  .meta({ id: 'ClaimFieldDefinitionDto' })
export type ClaimField = z.infer<typeof zClaimField>
