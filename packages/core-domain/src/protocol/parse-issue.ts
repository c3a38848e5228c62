import type { z } from 'zod'

/**
 * The issue a refusal names: the first one under one of the `first` top-level keys (in that order;
 * '' is an issue of the whole message), else the first one. The parse functions of this folder map
 * it to their protocol error code once.
 */
export function leadingIssue(error: z.ZodError, first: readonly string[] = []): z.core.$ZodIssue | undefined {
  for (const key of first) {
    const issue = error.issues.find((candidate) => (candidate.path[0] ?? '') === key)
    if (issue) return issue
  }
  return error.issues[0]
}

/** A JSON object (not an array or null): what a JSON or form body must be before its schema is applied. */
export const asObject = (body: unknown): Record<string, unknown> =>
  typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {}
