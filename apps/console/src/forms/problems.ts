import { ManagementApiError } from '@credential-service/sdk'
import type { z } from 'zod'

/** Form errors by field name (Mantine's `form.setErrors` shape). */
export type FieldErrors = Record<string, string>

/**
 * The form field an issue path names: the longest of `fields` that is the path or a prefix of it
 * (`roles.1` is the `roles` field); undefined when none is.
 */
export function fieldOf(
  path: readonly PropertyKey[] | string,
  fields: readonly string[],
): string | undefined {
  const parts = typeof path === 'string' ? path.split('.') : path.map(String)
  for (let length = parts.length; length > 0; length--) {
    const name = parts.slice(0, length).join('.')
    if (fields.includes(name)) return name
  }
  return undefined
}

/**
 * Checks `body` with the same zod schema the API validates it with (core-domain), before it is
 * sent: the issues by form field, the first per field. Issues of no field are under `''`.
 */
export function validateWith(schema: z.ZodType, body: unknown, fields: readonly string[]): FieldErrors {
  const result = schema.safeParse(body)
  if (result.success) return {}
  const errors: FieldErrors = {}
  for (const issue of result.error.issues) {
    const field = fieldOf(issue.path, fields) ?? ''
    errors[field] ??= issue.message
  }
  return errors
}

/**
 * What an API refusal says, by form field: RFC 9457 `errors[]` paths (`body.roles.1`) are matched
 * to the fields; the rest (and a problem without `errors[]`) become the form's own message under `''`.
 */
export function problemErrors(error: unknown, fields: readonly string[]): FieldErrors {
  if (!(error instanceof ManagementApiError)) return { '': 'The request failed. Try again.' }
  const errors: FieldErrors = {}
  const unmatched: string[] = []
  for (const { path, message } of error.problem?.errors ?? []) {
    const field = fieldOf(path.replace(/^body\.?/, ''), fields)
    if (field) errors[field] ??= message
    else unmatched.push(path ? `${path}: ${message}` : message)
  }
  if (Object.keys(errors).length === 0 || unmatched.length > 0)
    errors[''] = [describeError(error), ...unmatched].join(' ')
  return errors
}

/** One sentence for an API failure: the problem's detail or title, else what happened. */
export function describeError(error: unknown): string {
  if (!(error instanceof ManagementApiError)) return error instanceof Error ? error.message : String(error)
  if (error.status === 0) return 'The service did not answer. Check your connection and try again.'
  if (error.status === 403) return error.problem?.detail ?? 'Your roles do not allow this.'
  return (
    error.problem?.detail ??
    error.problem?.title ??
    error.oauthError?.error_description ??
    `The service answered ${error.status}.`
  )
}
