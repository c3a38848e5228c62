import {
  DatabaseUnavailableError,
  DomainError,
  ProtocolError,
  UnauthenticatedError,
  type ValidationIssue,
} from '@credential-service/core-domain'
import { isDatabaseUnavailable } from '@credential-service/db-schema'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod'
import { problem, problemFromDomainError } from './problem'

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'
export const BEARER_REALM = 'Bearer realm="credential-service"'

type HttpError = FastifyError & { validationContext?: string }

/** Fastify's own request errors (body parsing, content type, size, schema validation) by status. */
function frameworkIssue(
  error: HttpError,
): { status: number; detail: string; issues?: ValidationIssue[] } | undefined {
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
    return { status: 400, detail: `the request ${context} is invalid`, issues }
  }
  const status = error.statusCode ?? 500
  if (status === 413) return { status, detail: 'the request body is larger than allowed' }
  if (status === 415) return { status, detail: 'the Content-Type of the request is not supported here' }
  if (status >= 400 && status < 500) {
    // Message of Fastify's own parser errors is safe and useful ("Unexpected token } in JSON").
    return {
      status,
      detail: error.code?.startsWith('FST_') ? error.message : 'the request could not be read',
    }
  }
  return undefined
}

/**
 * A database that cannot answer surfaces as whatever the driver threw (a refused socket, a
 * statement timeout, an admin shutdown): give it its domain meaning before rendering.
 */
function classify(thrown: unknown): unknown {
  return !(thrown instanceof DomainError) && isDatabaseUnavailable(thrown)
    ? new DatabaseUnavailableError({ cause: thrown })
    : thrown
}

/**
 * A 503 says when to come back (RFC 9110 §10.2.3). It is logged at warn: an outage must show at
 * the production log level, though no request is at fault.
 */
function unavailable(error: DatabaseUnavailableError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('retry-after', String(error.retryAfterSeconds))
  request.log.warn({ code: error.code, err: error.cause }, error.detail)
}

/** Renders `/api` errors as RFC 9457 problem+json. Unknown faults: 500, logged, never echoed. */
export function problemErrorHandler(thrown: unknown, request: FastifyRequest, reply: FastifyReply) {
  const error = classify(thrown) as HttpError
  const instance = request.url.split('?')[0]
  let body: ReturnType<typeof problem>
  if (error instanceof DatabaseUnavailableError) {
    body = problemFromDomainError(error, instance)
    unavailable(error, request, reply)
  } else if (error instanceof DomainError) {
    body = problemFromDomainError(error, instance)
    request.log.info({ code: error.code, err: error.cause }, error.detail)
    if (error instanceof UnauthenticatedError) {
      reply.header(
        'www-authenticate',
        error.invalidToken ? `${BEARER_REALM}, error="invalid_token"` : BEARER_REALM,
      )
    }
  } else {
    const issue = frameworkIssue(error)
    if (issue) {
      const code =
        issue.status === 413
          ? 'payload_too_large'
          : issue.status === 415
            ? 'unsupported_media_type'
            : issue.issues
              ? 'invalid_input'
              : 'malformed_request'
      body = problem(code, issue.detail, {
        instance: instance ?? '',
        ...(issue.issues ? { errors: issue.issues } : {}),
      })
      request.log.info({ code, status: issue.status }, issue.detail)
    } else {
      request.log.error({ err: error }, 'unhandled error')
      body = problem('internal_error', 'an unexpected error occurred; see the service logs', {
        instance: instance ?? '',
      })
    }
  }
  return reply.status(body.status).type(PROBLEM_CONTENT_TYPE).send(body)
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
  // RFC 6749 §4.1.2.1 names this code for a server that cannot answer now.
  database_unavailable: [503, 'temporarily_unavailable'],
  protocol_error: [400, 'invalid_request'],
}

/**
 * Renders protocol errors as RFC 6749 §5.2 `{ error, error_description }` with `Cache-Control:
 * no-store`, and `WWW-Authenticate` on 401.
 */
export function oauthErrorHandler(thrown: unknown, request: FastifyRequest, reply: FastifyReply) {
  const error = classify(thrown) as HttpError
  reply.header('cache-control', 'no-store')
  if (error instanceof DatabaseUnavailableError) {
    unavailable(error, request, reply)
    const [status, code] = OAUTH_STATUS[error.code]
    return reply.status(status).send({ error: code, error_description: error.detail })
  }
  if (error instanceof ProtocolError) {
    request.log.info({ error: error.error, err: error.cause }, error.detail)
    if (error.challenge) reply.header('www-authenticate', error.challenge)
    return reply.status(error.status).send({ error: error.error, error_description: error.detail })
  }
  if (error instanceof DomainError) {
    const [status, code] = OAUTH_STATUS[error.code]
    request.log.info({ code: error.code, err: error.cause }, error.detail)
    return reply.status(status).send({ error: code, error_description: error.detail })
  }
  const issue = frameworkIssue(error)
  if (issue) {
    const description = issue.issues?.map((i) => `${i.path}: ${i.message}`).join('; ') ?? issue.detail
    request.log.info({ status: issue.status }, description)
    return reply.status(issue.status === 413 || issue.status === 415 ? issue.status : 400).send({
      error: 'invalid_request',
      error_description: description,
    })
  }
  request.log.error({ err: error }, 'unhandled error')
  return reply.status(500).send({ error: 'server_error', error_description: 'an unexpected error occurred' })
}
