import {
  DatabaseUnavailableError,
  DomainError,
  ProtocolError,
  RateLimitedError,
  StoredDataUnreadableError,
  UnauthenticatedError,
  UpstreamError,
  UpstreamUnavailableError,
  type ValidationIssue,
} from '@credential-service/core-domain'
import { DecryptionError, KeyProviderError } from '@credential-service/crypto'
import { databaseRefusal, isDatabaseUnavailable } from '@credential-service/db-schema'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod'
import { boundedIssues, type ProblemCode, problem, problemFromDomainError } from './problem'

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'
export const BEARER_REALM = 'Bearer realm="credential-service"'

type HttpError = FastifyError & { validationContext?: string }

/** What the HTTP layer refuses by status, before any route logic: code, OAuth error, detail. */
const LIMITS: Record<number, { code: ProblemCode; oauth: string; detail: string }> = {
  408: { code: 'request_timeout', oauth: 'invalid_request', detail: 'the request took too long to arrive' },
  413: {
    code: 'payload_too_large',
    oauth: 'invalid_request',
    detail: 'the request body is larger than allowed',
  },
  414: { code: 'uri_too_long', oauth: 'invalid_request', detail: 'the request URI is longer than allowed' },
  415: {
    code: 'unsupported_media_type',
    oauth: 'invalid_request',
    detail: 'the Content-Type of the request is not supported here',
  },
  431: {
    code: 'headers_too_large',
    oauth: 'invalid_request',
    detail: 'the request headers are larger than allowed',
  },
  503: {
    code: 'service_unavailable',
    oauth: 'temporarily_unavailable',
    detail: 'the server is shutting down; retry the request',
  },
}

/**
 * A refusal of the HTTP layer rendered where no route runs (the node:http parser): OAuth JSON on
 * a protocol path, problem+json under `/api` or when the path could not be read. Statuses without
 * an entry are malformed requests (400). `echo: false` leaves a truncated path out of `instance`.
 */
export function refusalBody(
  status: number,
  path: string | undefined,
  options: { echo: boolean },
): { contentType: string; body: string } {
  const limit = LIMITS[status]
  if (path === undefined || path.startsWith('/api')) {
    const instance = path === undefined || !options.echo ? {} : { instance: path }
    const body = limit
      ? problem(limit.code, limit.detail, instance)
      : problem('malformed_request', 'the request could not be read', instance)
    return { contentType: `${PROBLEM_CONTENT_TYPE}; charset=utf-8`, body: JSON.stringify(body) }
  }
  const body = limit
    ? { error: limit.oauth, error_description: limit.detail }
    : { error: 'invalid_request', error_description: 'the request could not be read' }
  return { contentType: 'application/json; charset=utf-8', body: JSON.stringify(body) }
}

/**
 * Fastify's router refusals (its `frameworkErrors`): a path parameter longer than `maxParamLength`
 * (414) or a malformed percent-encoding (400). Their messages quote the path, which may be a
 * capability (a request id), so the body is the generic refusal of the path's shape instead.
 */
export function routerErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const status = error.statusCode !== undefined && LIMITS[error.statusCode] ? error.statusCode : 400
  const path = request.url.split('?')[0] ?? ''
  const { contentType, body } = refusalBody(status, path, { echo: false })
  request.log.info({ code: error.code, status }, 'refused by the router')
  return reply
    .status(status)
    .header('cache-control', 'no-store')
    .header('x-request-id', request.id)
    .type(contentType)
    .send(body)
}

interface FrameworkIssue {
  status: number
  code: ProblemCode
  oauth: string
  detail: string
  issues?: ValidationIssue[]
}

/** `error_description` of validation issues: the first ones, and how many more (bounded as a problem's). */
function describeIssues(issues: ValidationIssue[]): string {
  const { errors, errorCount } = boundedIssues(issues)
  const listed = errors.map((i) => `${i.path}: ${i.message}`).join('; ')
  return errorCount === undefined ? listed : `${listed}; and ${errorCount - errors.length} more`
}

/** Fastify's own request errors (body parsing, content type, size, schema validation) by status. */
function frameworkIssue(error: HttpError): FrameworkIssue | undefined {
  if (hasZodFastifySchemaValidationErrors(error)) {
    const context = error.validationContext ?? 'body'
    const issues = error.validation.flatMap((item): ValidationIssue[] => {
      const base = [context, ...item.instancePath.split('/').filter(Boolean)].join('.')
      const keys = (item.params as { keys?: unknown }).keys
      // Unknown fields are refused by name (management inputs are strict).
      if (item.keyword === 'unrecognized_keys' && Array.isArray(keys)) {
        return keys.map((key) => ({
          path: `${base}.${String(key)}`,
          message: `unknown field '${String(key)}'`,
        }))
      }
      return [{ path: base, message: item.message ?? 'invalid value' }]
    })
    const detail = `the request ${context} is invalid`
    return { status: 400, code: 'invalid_input', oauth: 'invalid_request', detail, issues }
  }
  const status = error.statusCode ?? 500
  const limit = LIMITS[status]
  if (limit) return { status, ...limit }
  if (status >= 400 && status < 500) {
    // Message of Fastify's own parser errors is safe and useful ("Unexpected token } in JSON").
    const detail = error.code?.startsWith('FST_') ? error.message : 'the request could not be read'
    return { status, code: 'malformed_request', oauth: 'invalid_request', detail }
  }
  return undefined
}

/** `Retry-After` of a key store outage: a token or KMS that dropped its sessions is back within seconds. */
const KEY_PROVIDER_RETRY_AFTER_SECONDS = 5

/**
 * A key chain's provider failed to sign (Vault, AWS KMS, a PKCS#11 token). Gone or unusable for
 * now (unreachable, sessions dropped, token or module missing): 503 with `Retry-After`, as nothing
 * about the request is wrong. An error answer: 502. The provider's message (key names, addresses)
 * stays in `cause`, for the log only.
 */
function keyProviderFailure(error: KeyProviderError): DomainError {
  if (error.reason === 'unavailable' || error.reason === 'misconfigured') {
    return new UpstreamUnavailableError('the signing key is unavailable; retry later', {
      cause: error,
      retryAfterSeconds: KEY_PROVIDER_RETRY_AFTER_SECONDS,
    })
  }
  return new UpstreamError('the key provider did not sign', { cause: error })
}

/**
 * A database that cannot answer surfaces as whatever the driver threw (a refused socket, a
 * statement timeout, an admin shutdown): give it its domain meaning before rendering.
 */
function classify(thrown: unknown): unknown {
  if (thrown instanceof DecryptionError) return new StoredDataUnreadableError({ cause: thrown })
  if (thrown instanceof KeyProviderError) return keyProviderFailure(thrown)
  return !(thrown instanceof DomainError) && isDatabaseUnavailable(thrown)
    ? new DatabaseUnavailableError({ cause: thrown })
    : thrown
}

/** Logged at error: only the operator can mend unreadable data (the log names the row). */
function logDomainError(request: FastifyRequest, error: DomainError) {
  const level = error instanceof StoredDataUnreadableError ? 'error' : 'info'
  request.log[level]({ code: error.code, err: error.cause }, error.detail)
}

type Unavailable = DatabaseUnavailableError | UpstreamUnavailableError
const isUnavailable = (error: unknown): error is Unavailable =>
  error instanceof DatabaseUnavailableError || error instanceof UpstreamUnavailableError

/**
 * A 503 says when to come back (RFC 9110 §10.2.3). It is logged at warn: an outage must show at
 * the production log level, though no request is at fault. A connection PostgreSQL refused (too
 * many clients, a closed database) is named, as the operator can act on it.
 */
function unavailable(error: Unavailable, request: FastifyRequest, reply: FastifyReply) {
  reply.header('retry-after', String(error.retryAfterSeconds))
  request.log.warn({ code: error.code, err: error.cause }, databaseRefusal(error.cause) ?? error.detail)
}

/** Renders `/api` errors as RFC 9457 problem+json. Unknown faults: 500, logged, never echoed. */
export function problemErrorHandler(thrown: unknown, request: FastifyRequest, reply: FastifyReply) {
  const error = classify(thrown) as HttpError
  const instance = request.url.split('?')[0]
  let body: ReturnType<typeof problem>
  if (isUnavailable(error)) {
    body = problemFromDomainError(error, instance)
    unavailable(error, request, reply)
  } else if (error instanceof DomainError) {
    body = problemFromDomainError(error, instance)
    logDomainError(request, error)
    if (error instanceof RateLimitedError) reply.header('retry-after', error.retryAfterSeconds)
    if (error instanceof UnauthenticatedError) {
      reply.header(
        'www-authenticate',
        error.invalidToken ? `${BEARER_REALM}, error="invalid_token"` : BEARER_REALM,
      )
    }
  } else {
    const issue = frameworkIssue(error)
    if (issue) {
      body = problem(issue.code, issue.detail, {
        instance: instance ?? '',
        ...(issue.issues ? { errors: issue.issues } : {}),
      })
      request.log.info({ code: issue.code, status: issue.status }, issue.detail)
    } else {
      request.log.error({ err: error }, 'unhandled error')
      body = problem('internal_error', 'an unexpected error occurred; see the service logs', {
        instance: instance ?? '',
      })
    }
  }
  // The body is ours and always a problem: a route's schema for the same status (the health
  // route's 503) must not turn it into a serialization failure.
  return reply
    .status(body.status)
    .type(`${PROBLEM_CONTENT_TYPE}; charset=utf-8`)
    .serializer(JSON.stringify)
    .send(body)
}

/** Domain errors met on a protocol route, in OAuth terms. */
const OAUTH_STATUS: Record<DomainError['code'], [number, string]> = {
  not_found: [404, 'not_found'],
  invalid_input: [400, 'invalid_request'],
  rule_violation: [400, 'invalid_request'],
  conflict: [400, 'invalid_request'],
  forbidden: [403, 'access_denied'],
  unauthenticated: [401, 'invalid_token'],
  upstream_failure: [502, 'server_error'],
  // RFC 6749 §5.2 has no code for "too many requests" (RFC 8628's `slow_down` is a device-flow
  // polling signal, and OpenID4VCI 1.0 §6.3 defines none): the registered catch-all
  // `invalid_request` keeps every OAuth client on its error path, and the 429 status with
  // `Retry-After` (RFC 6585 §4) says when to try again.
  rate_limited: [429, 'invalid_request'],
  // RFC 6749 §4.1.2.1 names this code for a server that cannot answer now.
  database_unavailable: [503, 'temporarily_unavailable'],
  upstream_unavailable: [503, 'temporarily_unavailable'],
  stored_data_unreadable: [500, 'server_error'],
  protocol_error: [400, 'invalid_request'],
}

/**
 * RFC 6749 §5.2 (checklist I-69): `error_description` holds printable ASCII except `"` and `\`.
 * Descriptions may echo what the wallet sent (a credential_configuration_id), so typographic
 * quotes become `'` and any other character (code point) outside the set becomes `?`.
 */
export function oauthDescription(text: string): string {
  return text.replace(/[\u2018\u2019\u201C\u201D"]/g, "'").replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/gu, '?')
}

/**
 * Renders protocol errors as RFC 6749 §5.2 `{ error, error_description }` with `Cache-Control:
 * no-store`, and `WWW-Authenticate` on 401.
 */
export function oauthErrorHandler(thrown: unknown, request: FastifyRequest, reply: FastifyReply) {
  const send = (status: number, error: string, description: string) =>
    reply.status(status).send({ error, error_description: oauthDescription(description) })
  const error = classify(thrown) as HttpError
  // As for problems: the body is ours, whatever schema the route declares for the status.
  reply.header('cache-control', 'no-store').type('application/json; charset=utf-8').serializer(JSON.stringify)
  if (isUnavailable(error)) {
    unavailable(error, request, reply)
    const [status, code] = OAUTH_STATUS[error.code]
    return send(status, code, error.detail)
  }
  if (error instanceof ProtocolError) {
    request.log.info({ error: error.error, err: error.cause }, error.detail)
    if (error.challenge) reply.header('www-authenticate', error.challenge)
    return send(error.status, error.error, error.detail)
  }
  if (error instanceof DomainError) {
    const [status, code] = OAUTH_STATUS[error.code]
    logDomainError(request, error)
    if (error instanceof RateLimitedError) reply.header('retry-after', error.retryAfterSeconds)
    return send(status, code, error.detail)
  }
  const issue = frameworkIssue(error)
  if (issue) {
    const description = issue.issues ? describeIssues(issue.issues) : issue.detail
    request.log.info({ status: issue.status }, description)
    // Size, time and availability refusals keep their status; anything else about the request is a 400.
    return send(LIMITS[issue.status] ? issue.status : 400, issue.oauth, description)
  }
  request.log.error({ err: error }, 'unhandled error')
  return send(500, 'server_error', 'an unexpected error occurred')
}
