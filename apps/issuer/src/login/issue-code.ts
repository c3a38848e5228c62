import { ProtocolError } from '@credential-service/core-domain'
import { codeHash } from '@credential-service/crypto'
import type { AuthorizationRequestRow } from '@credential-service/db-schema'
import { type LoginScope, newHandle } from './login-scope'

/** RFC 6749 §4.1.2: a maximum lifetime of 10 minutes is recommended; the wallet redeems it at once. */
export const CODE_SECONDS = 60

/**
 * A fresh authorization code for a request whose holder is known (or needs no login: an offer's
 * claims stand for the holder), bound to its session. `loginClaimsEncrypted`: the holder's claims,
 * sealed, kept with the request until the code is redeemed (complete-login.ts).
 */
export async function issueCode(
  scope: LoginScope,
  row: AuthorizationRequestRow,
  sessionId: string,
  loginClaimsEncrypted?: string,
): Promise<string> {
  const code = newHandle()
  const expiresAt = new Date(scope.deps.now().getTime() + CODE_SECONDS * 1000)
  const issued = await scope.requests.issueCode(row.id, row.status, {
    codeHash: codeHash(code),
    sessionId,
    expiresAt,
    ...(loginClaimsEncrypted ? { loginClaimsEncrypted } : {}),
  })
  if (!issued) throw new ProtocolError('invalid_request', 'this authorization request is no longer pending')
  return code
}
