import {
  exceedsJsonDepth,
  InvalidInputError,
  MAX_JSON_DEPTH,
  type ValidationIssue,
} from '@credential-service/core-domain'
import type { FastifyInstance, FastifyRequest } from 'fastify'

// Pure checks that the protocol schemas (core-domain) apply to JSON inside form fields too.
export { exceedsJsonDepth, MAX_JSON_DEPTH }

// With the `u` flag a well-formed surrogate pair is one code point, so `\p{Cs}` only matches
// lone halves.
const LONE_SURROGATE = /\p{Cs}/u

/** NUL (PostgreSQL text and jsonb refuse it) or a lone surrogate (jsonb refuses it; not UTF-8). */
const unstorable = (text: string) => text.includes('\u0000') || LONE_SURROGATE.test(text)

/**
 * The first string (value or key) in `value` that the database cannot store, or a nesting deeper
 * than `limit`, as a validation issue at its dotted path. Recursion is bounded by `limit`.
 */
export function findUnstorable(
  value: unknown,
  path: string,
  limit = MAX_JSON_DEPTH,
): ValidationIssue | undefined {
  if (typeof value === 'string') {
    return unstorable(value) ? { path, message: whatIsWrong(value) } : undefined
  }
  if (value === null || typeof value !== 'object') return undefined
  if (limit === 0) return { path, message: `nests deeper than ${MAX_JSON_DEPTH} levels` }
  const entries = Array.isArray(value) ? value.entries() : Object.entries(value)
  for (const [key, item] of entries) {
    // A bad key is reported at its object: echoing the key would echo the bad character.
    if (typeof key === 'string' && unstorable(key))
      return { path, message: `has a key that ${whatIsWrong(key)}` }
    const found = findUnstorable(item, `${path}.${key}`, limit - 1)
    if (found) return found
  }
  return undefined
}

function whatIsWrong(text: string): string {
  return text.includes('\u0000') ? 'contains a NUL character' : 'contains a lone UTF-16 surrogate'
}

const SOURCES = ['params', 'query', 'body'] as const

/**
 * One check at the edge of every app: JSON bodies nested deeper than {@link MAX_JSON_DEPTH} are
 * refused before they are parsed, and NUL or lone surrogates anywhere in the path parameters, the
 * query or the parsed body (JSON or form) are refused before schema validation. Refusals are
 * `InvalidInputError`s, so each route renders them in its own shape (problem+json on `/api`,
 * `invalid_request` on protocol routes) and no handler ever sees such input.
 */
export function registerInputGuard(app: FastifyInstance): void {
  // Fastify's own parser (secure-json-parse, prototype poisoning refused), after the depth check.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, raw, done) => {
    const body = typeof raw === 'string' ? raw : raw.toString('utf8')
    if (exceedsJsonDepth(body)) {
      const message = `nests deeper than ${MAX_JSON_DEPTH} levels`
      done(new InvalidInputError(`body ${message}`, [{ path: 'body', message }]), undefined)
      return
    }
    parseJson(request, body, done)
  })

  app.addHook('preValidation', async (request: FastifyRequest) => {
    for (const source of SOURCES) {
      const issue = findUnstorable(request[source], source)
      // The detail names the field: protocol routes render only the detail.
      if (issue) throw new InvalidInputError(`${issue.path} ${issue.message}`, [issue])
    }
  })
}
