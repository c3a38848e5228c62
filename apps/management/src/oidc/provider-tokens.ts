import {
  type Principal,
  ROLES,
  type Role,
  UnauthenticatedError,
  UpstreamUnavailableError,
} from '@credential-service/core-domain'
import { ASYMMETRIC_JWS_ALGORITHMS } from '@credential-service/crypto'
import type { ProviderTokenVerifier } from '@credential-service/server-kit'
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from 'jose'
import type { ProviderDiscovery } from './provider-discovery'

export interface ProviderTokenOptions {
  discovery: ProviderDiscovery
  /** OIDC: the `iss` every token must carry (the public issuer, also behind an internal URL). */
  issuer: string
  /** OIDC_AUDIENCE, else `{PUBLIC_URL}/api`. */
  audience: string
  /** Dotted claim paths (OIDC_TENANT_CLAIM, OIDC_ROLES_CLAIM). */
  tenantClaim: string
  rolesClaim: string
  now?: () => Date
  timeoutMs?: number
}

const ALGORITHMS = ASYMMETRIC_JWS_ALGORITHMS

const KNOWN_ROLES = new Set<string>(ROLES)

/** The value at a dotted path (`realm_access.roles`), or undefined. */
export function claimAt(payload: JWTPayload, path: string): unknown {
  let value: unknown = payload
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
    value = (value as Record<string, unknown>)[key]
  }
  return value
}

/** Spec roles found in an array or space-separated claim; the provider's other roles are dropped. */
function rolesOf(value: unknown): Role[] {
  const listed = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/\s+/) : []
  return [
    ...new Set(listed.filter((role): role is Role => typeof role === 'string' && KNOWN_ROLES.has(role))),
  ]
}

function invalid(detail: string, cause?: unknown): UnauthenticatedError {
  return new UnauthenticatedError(detail, { cause, invalidToken: true })
}

/**
 * OIDC mode (spec §5.4): access tokens of the external provider, checked against its JWKS
 * (discovered, fetched from the internal issuer, cached by jose), with `iss` equal to OIDC, the
 * service's audience, and a lifetime. The principal is the one built-in tokens give: client id
 * from `client_id` (RFC 9068) or `azp`, tenant and roles from the configured claims. It is not
 * yet trusted: providerTenantVerifier checks spec §5 rules 2 and 3 and the tenant binding.
 */
export function createProviderTokenVerifier(options: ProviderTokenOptions): ProviderTokenVerifier {
  let keys: ReturnType<typeof createRemoteJWKSet> | undefined

  async function keySet() {
    if (!keys) {
      const { jwksUri } = await options.discovery.endpoints()
      keys = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: options.timeoutMs ?? 5000 })
    }
    return keys
  }

  return async function verify(token) {
    const jwks = await keySet()
    let payload: JWTPayload
    try {
      ;({ payload } = await jwtVerify(token, jwks, {
        issuer: options.issuer,
        audience: options.audience,
        algorithms: ALGORITHMS,
        requiredClaims: ['exp', 'iat'],
        ...(options.now ? { currentDate: options.now() } : {}),
      }))
    } catch (cause) {
      if (unreachable(cause))
        throw new UpstreamUnavailableError("the identity provider's keys cannot be fetched", { cause })
      throw invalid('the access token is invalid or expired', cause)
    }
    const clientId = typeof payload.client_id === 'string' ? payload.client_id : payload.azp
    if (typeof clientId !== 'string' || clientId === '') throw invalid('the access token names no client')
    const tenant = claimAt(payload, options.tenantClaim)
    const tenantId = typeof tenant === 'string' && tenant !== '' ? tenant : undefined
    const roles = rolesOf(claimAt(payload, options.rolesClaim))
    // Spec §5 rules 2 and 3 are checked with the tenant binding (server-kit providerTenantVerifier).
    const principal: Principal = { clientId, tenantId, roles }
    return { principal, issuedAt: payload.iat as number }
  }
}

/** Errors of fetching the key set (timeout, refused connection, non-200), not of the token. */
function unreachable(error: unknown): boolean {
  if (!(error instanceof errors.JOSEError)) return true
  return (
    error instanceof errors.JWKSTimeout ||
    error instanceof errors.JWKSInvalid ||
    error.code === errors.JOSEError.code
  )
}
