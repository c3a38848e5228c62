import {
  type DomainError,
  type DomainErrorCode,
  InvalidInputError,
  type Problem,
  RuleViolationError,
  type ValidationIssue,
} from '@credential-service/core-domain'

/** Problem codes of `/api`: the domain codes plus what the HTTP layer itself can refuse. */
export type ProblemCode =
  | Exclude<DomainErrorCode, 'protocol_error'>
  | 'malformed_request'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'headers_too_large'
  | 'request_timeout'
  | 'route_not_found'
  | 'internal_error'
  | 'service_unavailable'

interface ProblemKind {
  status: number
  title: string
}

/** The one table of status and title per code; the `never` check makes a new code fail the typecheck. */
export function problemKind(code: ProblemCode): ProblemKind {
  switch (code) {
    case 'invalid_input':
      return { status: 400, title: 'Invalid input' }
    case 'malformed_request':
      return { status: 400, title: 'Malformed request' }
    case 'unauthenticated':
      return { status: 401, title: 'Authentication required' }
    case 'forbidden':
      return { status: 403, title: 'Forbidden' }
    case 'not_found':
      return { status: 404, title: 'Not found' }
    case 'route_not_found':
      return { status: 404, title: 'No such route' }
    case 'conflict':
      return { status: 409, title: 'Conflict' }
    case 'rule_violation':
      return { status: 422, title: 'Unprocessable content' }
    case 'payload_too_large':
      return { status: 413, title: 'Payload too large' }
    case 'unsupported_media_type':
      return { status: 415, title: 'Unsupported media type' }
    case 'uri_too_long':
      return { status: 414, title: 'URI too long' }
    case 'headers_too_large':
      return { status: 431, title: 'Request header fields too large' }
    case 'request_timeout':
      return { status: 408, title: 'Request timeout' }
    case 'rate_limited':
      return { status: 429, title: 'Too many requests' }
    case 'stored_data_unreadable':
      return { status: 500, title: 'Stored data unreadable' }
    case 'upstream_failure':
      return { status: 502, title: 'Upstream failure' }
    case 'internal_error':
      return { status: 500, title: 'Internal server error' }
    case 'service_unavailable':
    case 'database_unavailable':
    case 'upstream_unavailable':
      return { status: 503, title: 'Service unavailable' }
    default: {
      const unmapped: never = code
      throw new Error(`unmapped problem code ${String(unmapped)}`)
    }
  }
}

export const PROBLEM_TYPE_BASE = 'https://credential-service.dev/problems/'

/**
 * Issues a problem lists at most (the first ones); `errorCount` then says how many there were.
 * A body of 10,000 invalid array items must not answer with megabytes of issues.
 */
export const PROBLEM_ERRORS_LIMIT = 20

/** The first {@link PROBLEM_ERRORS_LIMIT} issues, and their total when some were left out. */
export function boundedIssues(issues: ValidationIssue[]): { errors: ValidationIssue[]; errorCount?: number } {
  if (issues.length <= PROBLEM_ERRORS_LIMIT) return { errors: issues }
  return { errors: issues.slice(0, PROBLEM_ERRORS_LIMIT), errorCount: issues.length }
}

export function problem(
  code: ProblemCode,
  detail: string,
  options: { instance?: string; errors?: ValidationIssue[] } = {},
): Problem {
  const kind = problemKind(code)
  return {
    type: `${PROBLEM_TYPE_BASE}${code.replaceAll('_', '-')}`,
    title: kind.title,
    status: kind.status,
    detail,
    code,
    ...(options.instance ? { instance: options.instance } : {}),
    ...(options.errors?.length ? boundedIssues(options.errors) : {}),
  }
}

export function problemFromDomainError(error: DomainError, instance?: string): Problem {
  const code: ProblemCode = error.code === 'protocol_error' ? 'invalid_input' : error.code
  const errors =
    error instanceof InvalidInputError || error instanceof RuleViolationError ? error.issues : undefined
  return problem(code, error.detail, { ...(instance ? { instance } : {}), ...(errors ? { errors } : {}) })
}

/** Every problem status a management route can answer, for the OpenAPI description. */
export const PROBLEM_STATUSES = [
  400, 401, 403, 404, 408, 409, 413, 414, 415, 422, 431, 500, 502, 503,
] as const
