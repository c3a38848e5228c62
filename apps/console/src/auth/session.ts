import type { Role } from '@credential-service/core-domain'
import type { TokenResponse } from '@credential-service/sdk'

/**
 * Who is signed in. With client credentials the session lives at the service (issue 42) and the
 * tab knows only its CSRF token; in OIDC mode the provider's token lives in memory only (issue
 * 22): never in storage, cookies or URLs.
 */
export interface Session {
  /** The API client (client credentials), or who signed in at the identity provider (OIDC). */
  clientId: string
  /** OIDC mode: the provider's access token; undefined for a server session. */
  accessToken?: string
  /** A server session's CSRF token (server-session.ts); undefined in OIDC mode. */
  csrfToken?: string
  roles: readonly Role[]
  /** The token's tenant (`sub`); undefined for operator clients, bound to no tenant. */
  tenantId: string | undefined
  /** Epoch milliseconds after which the token (the server session) is no longer accepted. */
  expiresAt: number
}

/**
 * Where a provider's access token names the tenant and the roles (OIDC mode:
 * OIDC_TENANT_CLAIM, OIDC_ROLES_CLAIM, dotted paths); undefined: the built-in token server's
 * `sub` and `scope`.
 */
export interface TokenClaims {
  tenantClaim: string
  rolesClaim: string
}

/**
 * The session of a token response. Built-in token server: roles from `scope` (the granted roles,
 * space-separated), the tenant from the JWT's `sub` claim (DESIGN.md "Tokens and tenancy"). OIDC
 * mode: both from the claims the service reads (docs/oidc-mode.md). Reading the claims needs no
 * verification: the API checks every request; this only decides what the navigation shows.
 */
export function sessionOf(
  clientId: string,
  token: TokenResponse,
  now = Date.now(),
  provider?: TokenClaims,
): Session {
  const claims = jwtClaims(token.access_token)
  const fromClaim = (value: unknown) =>
    Array.isArray(value) ? value : typeof value === 'string' ? value.split(' ').filter(Boolean) : []
  const granted = provider
    ? fromClaim(claimAt(claims, provider.rolesClaim))
    : token.scope
      ? token.scope.split(' ')
      : fromClaim(claims.roles)
  const tenant = provider ? claimAt(claims, provider.tenantClaim) : claims.sub
  return {
    clientId,
    accessToken: token.access_token,
    // Other values than the spec's roles match no page (and the API ignores them).
    roles: granted.filter((role): role is Role => typeof role === 'string'),
    tenantId: typeof tenant === 'string' ? tenant : undefined,
    expiresAt: now + token.expires_in * 1000,
  }
}

/** Who a provider's token is of, for the header: the user's name, else its subject. */
export function subjectOf(token: TokenResponse): string {
  const claims = jwtClaims(token.access_token)
  const name = claims.preferred_username ?? claims.sub ?? claims.client_id ?? claims.azp
  return typeof name === 'string' ? name : 'signed in'
}

/** A claim by dotted path (`realm_access.roles`), as the service reads it. */
function claimAt(claims: Record<string, unknown>, path: string): unknown {
  let node: unknown = claims
  for (const key of path.split('.'))
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined
  return node
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
