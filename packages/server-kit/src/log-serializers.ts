import type { FastifyRequest } from 'fastify'

// Query parameters whose values are safe to log: paging and filters of the management API. Any
// other value may be a bearer secret (`access_token`, `pre-authorized_code`, `request_uri`, …).
const LOGGED_QUERY_PARAMETERS = new Set(['limit', 'cursor', 'status'])

// Path segments that are capabilities: whoever reads the URL may fetch the credential offer, or
// fetch and answer the presentation request (OpenID4VCI §4.1.3, OpenID4VP §5.10). An offer by
// reference is addressed by its session id, so session URLs of the management API count too.
const CAPABILITY_SEGMENTS = [
  /(\/issuers\/[^/?]+\/offers\/)[^/?]+/,
  /(\/verifiers\/[^/?]+\/(?:requests|responses)\/)[^/?]+/,
  /(\/api\/(?:tenants\/[^/?]+\/)?sessions\/)[^/?]+/,
]

export const REDACTED = '[redacted]'

/** The request URL as it may be logged: capability segments and query values redacted. */
export function loggableUrl(url: string): string {
  const mark = url.indexOf('?')
  let path = mark < 0 ? url : url.slice(0, mark)
  for (const segment of CAPABILITY_SEGMENTS) path = path.replace(segment, `$1${REDACTED}`)
  if (mark < 0) return path
  const query = url
    .slice(mark + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=')
      if (equals < 0) return pair
      const name = pair.slice(0, equals)
      return LOGGED_QUERY_PARAMETERS.has(name) ? pair : `${name}=${REDACTED}`
    })
    .join('&')
  return `${path}?${query}`
}

/** Fastify's request serializer, with the URL made loggable. */
export function serializeRequest(
  request: Pick<FastifyRequest, 'method' | 'url' | 'host' | 'ip'> & { socket?: { remotePort?: number } },
) {
  return {
    method: request.method,
    url: loggableUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  }
}

// Fields that carry the values of a failed statement: drizzle's `params` (also in its message),
// postgres.js' `parameters`, `args` and `types`; the server's `detail` ("Key (id)=(…) already
// exists"), `where` and `internal_query` on a database error.
const PARAMETER_FIELDS = new Set(['params', 'parameters', 'args', 'types'])
const DATABASE_VALUE_FIELDS = new Set(['detail', 'where', 'internal_query', 'internalQuery'])
// Shortest value scrubbed from messages: shorter ones would mangle ordinary words.
const MIN_SCRUBBED_LENGTH = 4

type ErrorLike = Error & Record<string, unknown>
type SerializedError = { type: string; message: string; stack: string; [key: string]: unknown }

/**
 * pino's `err` serializer, minus anything that holds the values of a failed SQL statement: the
 * SQL text (with placeholders), the SQLSTATE and the constraint stay, so the fault can still be
 * diagnosed. Walks the `cause` chain, where drivers put the original error.
 */
export function serializeError(error: Error): SerializedError {
  // pino hands over whatever was logged as `err`; only errors are rewritten.
  if (!(error instanceof Error)) return error as SerializedError
  const values = statementValues(error as ErrorLike)
  const scrub = (text: string) => values.reduce((result, value) => result.split(value).join(REDACTED), text)
  const serialize = (current: ErrorLike, depth: number): SerializedError => {
    const isDatabaseError = typeof current.severity === 'string' && typeof current.code === 'string'
    const message = withoutParams(current)
    const output: SerializedError = {
      type: current.constructor?.name ?? current.name,
      message: scrub(message),
      stack: scrub((current.stack ?? '').replace(current.message, message)),
    }
    for (const [key, value] of Object.entries(current)) {
      if (key === 'cause' || PARAMETER_FIELDS.has(key)) continue
      if (isDatabaseError && DATABASE_VALUE_FIELDS.has(key)) continue
      output[key] = typeof value === 'string' ? scrub(value) : value
    }
    if (current.cause instanceof Error && depth < 8) {
      output.cause = serialize(current.cause as ErrorLike, depth + 1)
    }
    return output
  }
  return serialize(error as ErrorLike, 0)
}

/** drizzle's message is "Failed query: <sql>\nparams: <values>": keep the first part. */
function withoutParams(error: ErrorLike): string {
  return Array.isArray(error.params) ? error.message.replace(/\nparams: [\s\S]*$/, '') : error.message
}

/** The parameter values of any failed statement in the chain, as they could appear in text. */
function statementValues(error: ErrorLike): string[] {
  const values = new Set<string>()
  for (let current: ErrorLike | undefined = error, depth = 0; current && depth < 8; depth++) {
    // postgres.js attaches `parameters` without making it enumerable.
    for (const list of [current.params, current.parameters]) {
      if (!Array.isArray(list)) continue
      for (const value of list) {
        const text = asText(value)
        if (text.length >= MIN_SCRUBBED_LENGTH) values.add(text)
      }
    }
    current = current.cause instanceof Error ? (current.cause as ErrorLike) : undefined
  }
  // Longest first, so that a value containing another is scrubbed whole.
  return [...values].sort((a, b) => b.length - a.length)
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value
  if (!value || typeof value !== 'object') return ''
  try {
    // jsonb parameters reach the server as JSON text.
    return JSON.stringify(value) ?? ''
  } catch {
    return ''
  }
}
