/**
 * One error hierarchy for the whole service. Management routes render it as RFC 9457
 * problem+json, protocol routes as OAuth error responses; the mapping lives in server-kit.
 * `detail` is public; anything diagnostic goes in `cause` and is only logged.
 */
export type DomainErrorCode =
  | 'not_found'
  | 'conflict'
  | 'forbidden'
  | 'unauthenticated'
  | 'invalid_input'
  | 'rule_violation'
  | 'upstream_failure'
  | 'rate_limited'
  | 'database_unavailable'
  | 'upstream_unavailable'
  | 'stored_data_unreadable'
  | 'protocol_error'

export interface ValidationIssue {
  /** Dotted path of the offending field, `''` for the whole body. */
  path: string
  message: string
}

export class DomainError extends Error {
  readonly code: DomainErrorCode
  readonly detail: string

  constructor(code: DomainErrorCode, detail: string, options?: { cause?: unknown }) {
    super(detail, options)
    this.name = new.target.name
    this.code = code
    this.detail = detail
  }
}

export class NotFoundError extends DomainError {
  /** Leave `id` out when it is a bearer-like capability (an offer or request id): details are logged. */
  constructor(resource: string, id?: string) {
    super('not_found', id === undefined ? `${resource} was not found` : `${resource} '${id}' was not found`)
  }
}

export class ConflictError extends DomainError {
  constructor(detail: string) {
    super('conflict', detail)
  }
}

export class ForbiddenError extends DomainError {
  constructor(detail: string) {
    super('forbidden', detail)
  }
}

export class UnauthenticatedError extends DomainError {
  /** True when a token was presented and refused (RFC 6750 §3.1 `error="invalid_token"`). */
  readonly invalidToken: boolean

  constructor(detail: string, options?: { cause?: unknown; invalidToken?: boolean }) {
    super('unauthenticated', detail, options)
    this.invalidToken = options?.invalidToken ?? false
  }
}

export class InvalidInputError extends DomainError {
  readonly issues: ValidationIssue[]

  constructor(detail: string, issues: ValidationIssue[] = []) {
    super('invalid_input', detail)
    this.issues = issues
  }
}

/** Well-formed input that breaks a rule of the domain or a protocol (DCQL, mdoc namespaces, …). */
export class RuleViolationError extends DomainError {
  readonly issues: ValidationIssue[]

  constructor(detail: string, issues: ValidationIssue[] = []) {
    super('rule_violation', detail)
    this.issues = issues
  }
}

export class UpstreamError extends DomainError {
  /** The other side did not answer (a timeout, no connection): asking again later may work. */
  readonly transient: boolean

  constructor(detail: string, options?: { cause?: unknown; transient?: boolean }) {
    super('upstream_failure', detail, options)
    this.transient = options?.transient ?? false
  }
}

/** Too many requests or failed attempts from one caller (HTTP 429 with `Retry-After`, RFC 6585 §4). */
export class RateLimitedError extends DomainError {
  /** Whole seconds until the caller's window ends (at least 1): the `Retry-After` value. */
  readonly retryAfterSeconds: number

  constructor(retryAfterSeconds: number) {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds))
    super('rate_limited', `too many requests; retry after ${seconds} s`)
    this.retryAfterSeconds = seconds
  }
}

/** `Retry-After` of a database outage: reconnects are retried within a second, pools refill soon after. */
export const DATABASE_RETRY_AFTER_SECONDS = 5

/**
 * The database cannot answer now: unreachable, restarting, out of connections, or too slow (a
 * statement or pool timeout). Nothing about the request is wrong, so it is a 503 with
 * `Retry-After`, never a 500; the driver's error stays in `cause` and is only logged.
 */
export class DatabaseUnavailableError extends DomainError {
  /** Seconds a client should wait before retrying (the `Retry-After` header). */
  readonly retryAfterSeconds: number

  constructor(options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super('database_unavailable', 'the database is unavailable; retry later', options)
    this.retryAfterSeconds = options?.retryAfterSeconds ?? DATABASE_RETRY_AFTER_SECONDS
  }
}

/**
 * An external system the request needs (the identity provider in OIDC mode) cannot be reached or
 * answered too slowly. Like a database outage it is a 503 with `Retry-After`, not a 502: nothing
 * about the request or the system's answer is wrong, it is simply not there now.
 */
export class UpstreamUnavailableError extends DomainError {
  readonly retryAfterSeconds: number

  constructor(detail: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super('upstream_unavailable', detail, options)
    this.retryAfterSeconds = options?.retryAfterSeconds ?? 10
  }
}

/**
 * Data the service stored encrypted does not decrypt: another `MASTER_SECRET`, or a ciphertext
 * copied from another row or tenant. Nothing about the request is wrong and retrying will not
 * help, so it is a 500 of its own code, which monitoring can tell from other faults.
 */
export class StoredDataUnreadableError extends DomainError {
  constructor(options?: { cause?: unknown }) {
    super(
      'stored_data_unreadable',
      'data stored for this request cannot be decrypted; the operator has the details in the logs',
      options,
    )
  }
}

/** Error codes defined by RFC 6749 §5.2, RFC 6750 §3, OpenID4VCI 1.0 and OpenID4VP 1.0. */
export type ProtocolErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'invalid_proof'
  | 'invalid_nonce'
  | 'invalid_credential_request'
  | 'unknown_credential_configuration'
  | 'unknown_credential_identifier'
  | 'credential_request_denied'
  | 'invalid_transaction_id'
  | 'invalid_encryption_parameters'
  | 'invalid_notification_id'
  | 'invalid_notification_request'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | 'use_attestation_challenge'
  | 'access_denied'
  | 'unsupported_response_type'
  /** OpenID4VCI 1.1 Interactive Authorization: no supported interaction type fits. */
  | 'missing_interaction_type'
  /** FiPA §5.2.2.1: the auth_session is invalid, expired, used or otherwise unusable. */
  | 'invalid_session'
  /** FiPA §5.2.2.1.1: continue with a normal authorization code flow in a browser. */
  | 'redirect_to_web'
  | 'server_error'

export class ProtocolError extends DomainError {
  readonly error: ProtocolErrorCode
  readonly status: number
  /** Value of `WWW-Authenticate` to send with a 401, if any. */
  readonly challenge: string | undefined

  constructor(
    error: ProtocolErrorCode,
    description: string,
    options: { status?: number; challenge?: string; cause?: unknown } = {},
  ) {
    super('protocol_error', description, { cause: options.cause })
    this.error = error
    this.status = options.status ?? 400
    this.challenge = options.challenge
  }
}
