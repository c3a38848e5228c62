import { ProtocolError } from '@credential-service/core-domain'
import type { AuthorizationRequestRow } from '@credential-service/db-schema'
import type { LoginScope } from './login-scope'

/** Where the browser goes next: the wallet's redirect_uri, or the upstream login page. */
export interface AuthorizationStep {
  redirect: string
  /** `Set-Cookie` binding the login to this browser. */
  cookie?: string
}

/** The wallet's redirect_uri with `params`; RFC 9207: `iss` on every answer, success or error. */
export function toWallet(
  scope: LoginScope,
  row: AuthorizationRequestRow,
  params: Record<string, string>,
): AuthorizationStep {
  const url = new URL(row.redirectUri)
  for (const [key, value] of Object.entries({
    ...params,
    ...(row.state ? { state: row.state } : {}),
    iss: scope.issuerUrl,
  }))
    url.searchParams.set(key, value)
  return { redirect: url.toString() }
}

/** Ends the request as failed and tells the wallet access_denied. */
export async function denied(
  scope: LoginScope,
  row: AuthorizationRequestRow,
  description: string,
): Promise<AuthorizationStep> {
  await scope.requests.fail(row.id)
  return toWallet(scope, row, { error: 'access_denied', error_description: description })
}

/**
 * A refusal at /authorize, before any login: the redirect_uri of a request without an offer is
 * the unregistered wallet's say-so, so the browser is not sent there (an open redirect).
 */
export async function refused(
  scope: LoginScope,
  row: AuthorizationRequestRow,
  description: string,
): Promise<AuthorizationStep> {
  if (row.sessionId) return denied(scope, row, description)
  await scope.requests.fail(row.id)
  throw new ProtocolError('access_denied', description)
}
