import type { Role } from '@credential-service/core-domain'

/**
 * Who is signed in. The session lives at the service (issue 42, both sign-in modes) and the tab
 * knows only its CSRF token: never a token, in memory, storage, cookies or URLs.
 */
export interface Session {
  /** The API client (client credentials), or who signed in at the identity provider (OIDC). */
  clientId: string
  /** The session's CSRF token (server-session.ts), sent with every API call. */
  csrfToken: string
  roles: readonly Role[]
  /** The token's tenant (`sub`); undefined for operator clients, bound to no tenant. */
  tenantId: string | undefined
  /** Epoch milliseconds after which the token (the server session) is no longer accepted. */
  expiresAt: number
}
