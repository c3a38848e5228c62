import type { Role } from '@credential-service/core-domain'
import type { TokenResponse } from '@credential-service/sdk'

/**
 * Who is signed in, in memory only (issue 22): never in storage, cookies or URLs, so a reload or
 * another tab starts signed out, and signing out forgets the token.
 */
export interface Session {
  clientId: string
  accessToken: string
  roles: readonly Role[]
  /** The token's tenant (`sub`); undefined for operator clients, bound to no tenant. */
  tenantId: string | undefined
  /** Epoch milliseconds after which the token is no longer accepted. */
  expiresAt: number
}

/**
 * The session of a token response: roles from `scope` (the granted roles, space-separated), the
 * tenant from the JWT's `sub` claim (DESIGN.md "Tokens and tenancy"). Reading the claims needs no
 * verification: the API checks every request; this only decides what the navigation shows.
 */
export function sessionOf(clientId: string, token: TokenResponse, now = Date.now()): Session {
  const claims = jwtClaims(token.access_token)
  const granted = token.scope ? token.scope.split(' ') : Array.isArray(claims.roles) ? claims.roles : []
  return {
    clientId,
    accessToken: token.access_token,
    // Other values than the spec's roles match no page (and the API ignores them).
    roles: granted.filter((role): role is Role => typeof role === 'string'),
    tenantId: typeof claims.sub === 'string' ? claims.sub : undefined,
    expiresAt: now + token.expires_in * 1000,
  }
}

function jwtClaims(jwt: string): Record<string, unknown> {
  const payload = jwt.split('.')[1]
  if (!payload) return {}
  try {
    const base64 = payload.replace(/-/g, '+').replace(/_/g, '/')
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))
    const claims: unknown = JSON.parse(new TextDecoder().decode(bytes))
    return typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}
