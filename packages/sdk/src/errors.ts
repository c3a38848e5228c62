import type { OAuthError, Problem } from './generated/types.js'

const PROBLEM_JSON = 'application/problem+json'

export interface ManagementApiErrorInit {
  method: string
  url: string
  /** HTTP status; 0 when no answer arrived (network failure). */
  status: number
  problem?: Problem | undefined
  oauthError?: OAuthError | undefined
  body?: string | undefined
  cause?: unknown
}

/**
 * Any answer of the management API other than 2xx, or no answer at all. `code` is always set:
 * the problem's `code` (RFC 9457 answers of `/api`), the OAuth `error` (token endpoint), `network_error`
 * when the request never got an answer, `invalid_response` for a 2xx body that is not JSON, else
 * `http_<status>` (for example an HTML 502 page from a proxy, kept in `body`).
 */
export class ManagementApiError extends Error {
  readonly method: string
  readonly url: string
  readonly status: number
  readonly code: string
  /** The RFC 9457 problem details, when the answer was `application/problem+json`. */
  readonly problem: Problem | undefined
  /** The RFC 6749 §5.2 error, when the token endpoint refused. */
  readonly oauthError: OAuthError | undefined
  /** The raw answer text when it was neither of the above (undefined without an answer). */
  readonly body: string | undefined

  constructor(code: string, init: ManagementApiErrorInit) {
    const reason = init.problem?.detail ?? init.problem?.title ?? init.oauthError?.error_description ?? code
    super(`${init.method} ${init.url}: ${init.status || 'no answer'} ${reason}`, { cause: init.cause })
    this.name = 'ManagementApiError'
    this.method = init.method
    this.url = init.url
    this.status = init.status
    this.code = code
    this.problem = init.problem
    this.oauthError = init.oauthError
    this.body = init.body
  }
}

/** The error for a non-2xx answer, reading its body once. */
export async function errorFromResponse(method: string, url: string, response: Response) {
  const text = await response.text().catch(() => '')
  const contentType = response.headers.get('content-type') ?? ''
  const json = parseJson(text)
  const init = { method, url, status: response.status }
  if (contentType.includes(PROBLEM_JSON) && isProblem(json))
    return new ManagementApiError(json.code, { ...init, problem: json })
  if (contentType.includes('json') && isOAuthError(json))
    return new ManagementApiError(json.error, { ...init, oauthError: json })
  return new ManagementApiError(`http_${response.status}`, { ...init, body: text })
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function isProblem(value: unknown): value is Problem {
  return isObject(value) && typeof value.code === 'string' && typeof value.status === 'number'
}

function isOAuthError(value: unknown): value is OAuthError {
  return isObject(value) && typeof value.error === 'string'
}
