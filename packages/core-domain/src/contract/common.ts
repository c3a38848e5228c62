import { z } from 'zod'

export const zTimestamp = z.iso.datetime().describe('RFC 3339 timestamp (UTC)')

/** A country as certificates name it (`C=`): ISO 3166-1 alpha-2, in capitals. */
export const zCountryCode = z.string().regex(/^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 code in capitals, e.g. DE')

export const zPageQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(50).describe('Page size, 1 to 100'),
    cursor: z.string().max(200).optional().describe('Opaque cursor from the previous page'),
  })
  .strict()
export type PageQuery = z.infer<typeof zPageQuery>

const pages = new WeakMap<z.ZodType, z.ZodType>()

/**
 * A page of `item`s. Named `<Item>Page` in the OpenAPI document when the item schema has an id, and
 * built once per item schema, so every route that lists the same items refers to one component.
 */
export function zPage<T extends z.ZodType>(item: T) {
  const known = pages.get(item)
  if (known) return known as ReturnType<typeof pageOf<T>>
  const page = pageOf(item)
  const itemId = z.globalRegistry.get(item)?.id
  const named = itemId ? page.meta({ id: `${itemId}Page` }) : page
  pages.set(item, named)
  return named
}
function pageOf<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page'),
  })
}
export interface Page<T> {
  items: T[]
  nextCursor: string | null
}

/** RFC 9457 problem details, as every `/api` error is rendered. */
export const zProblem = z
  .object({
    type: z.string().describe('URI identifying the problem type'),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    instance: z.string().optional(),
    code: z.string().describe('Stable machine-readable code'),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe('Validation issues, one per offending field; the first 20 when there are more'),
    errorCount: z
      .number()
      .int()
      .optional()
      .describe('How many validation issues there were, when `errors` lists only the first 20'),
  })
  .describe('RFC 9457 problem details')
  .meta({ id: 'Problem' })
export type Problem = z.infer<typeof zProblem>

/** RFC 6749 §5.2 error response, used by `/api/oauth2/token` and protocol endpoints. */
export const zOAuthError = z
  .object({
    error: z.string(),
    error_description: z.string().optional(),
  })
  .meta({ id: 'OAuthError' })
