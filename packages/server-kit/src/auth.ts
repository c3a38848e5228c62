import {
  ForbiddenError,
  hasAnyRole,
  InvalidInputError,
  NotFoundError,
  type Principal,
  type Role,
  UnauthenticatedError,
} from '@credential-service/core-domain'
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import { decodeJwt } from 'jose'
import type { TenantCache } from './tenant-cache'

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified caller; set on every route that declares roles. */
    principal: Principal
    /**
     * Tenant the request acts on: the path's `{tenantId}`, else the token's tenant; null for an
     * operator on a shorthand route (operator scope).
     */
    tenantScope: string | null
  }
  interface FastifyContextConfig {
    /** Roles of which the caller needs at least one (spec §5 rule 4). */
    roles?: readonly Role[]
  }
}

export type VerifyAccessToken = (token: string) => Promise<Principal>

/**
 * Checklist S-108: a tenant token stops working when its tenant is deleted, and does not come back
 * when a tenant is created again with the same id: the token's `tenant_generation` must be the
 * tenant's current one, asked of the tenant cache on every request. Operator tokens name no tenant.
 */
export function tenantBoundVerifier(
  verify: VerifyAccessToken,
  tenants: Pick<TenantCache, 'isCurrentGeneration'>,
): VerifyAccessToken {
  return async (token) => {
    const principal = await verify(token)
    const { tenantId, tenantGeneration } = principal
    if (tenantId === undefined) return principal
    if (tenantGeneration === undefined || !(await tenants.isCurrentGeneration(tenantId, tenantGeneration))) {
      throw new UnauthenticatedError('the access token belongs to a tenant that no longer exists', {
        invalidToken: true,
      })
    }
    return principal
  }
}

/** An external provider's token verified: the principal and when the token was issued (`iat`, seconds). */
export type ProviderTokenVerifier = (token: string) => Promise<{ principal: Principal; issuedAt: number }>

/** Clock difference tolerated between the identity provider and the service. */
const PROVIDER_CLOCK_SKEW_SECONDS = 30

export interface ProviderTenantVerifierOptions {
  /**
   * CONSOLE_OIDC_CLIENT_ID: the admin console's public client at the provider. Its tokens are
   * users' tokens; one naming a tenant (a user attribute the provider maps into the tenant claim)
   * is bound to the tenant itself, since the console is no client of any tenant. Undefined (the
   * console does not sign in at the provider): no client gets this exception.
   */
  consoleClientId?: string | undefined
}

/**
 * Checklist S-108 in OIDC mode, where the provider knows no tenant generation: a tenant token is
 * accepted only while its client is one of the tenant's clients in the service's records, and
 * only if it was issued after that record was created. Deleting a tenant (its clients go with
 * it) or a client refuses its tokens at once, and a tenant or client created again with the same
 * id does not bring back tokens issued before. Operator tokens name no tenant.
 *
 * A console user's token (client exactly `consoleClientId`) is held to the same property keyed on
 * the tenant: accepted while the tenant exists, and only if issued after the tenant was created.
 * Any other client naming a tenant (a public client made by hand at the provider) stays refused.
 *
 * Spec §5 rules 2 and 3 are checked here, for every provider token: the provider, not the
 * service, put the roles and the tenant together, so a user attribute cannot make a tenant-bound
 * operator.
 */
export function providerTenantVerifier(
  verify: ProviderTokenVerifier,
  tenants: Pick<TenantCache, 'client' | 'tenant'>,
  options: ProviderTenantVerifierOptions = {},
): VerifyAccessToken {
  const { consoleClientId } = options
  const refuse = (detail: string) => new UnauthenticatedError(detail, { invalidToken: true })
  return async (token) => {
    const { principal, issuedAt } = await verify(token)
    const { tenantId, clientId, roles } = principal
    if (tenantId === undefined) {
      if (roles.includes('tenant:manage')) return principal
      throw refuse("the access token names no tenant and has no role 'tenant:manage'")
    }
    if (roles.includes('tenant:manage'))
      throw refuse("an access token with role 'tenant:manage' must not name a tenant")
    const record =
      consoleClientId !== undefined && clientId === consoleClientId
        ? await tenants.tenant(tenantId)
        : await tenants.client(tenantId, clientId)
    const createdAt = record ? Math.floor(Date.parse(record.createdAt) / 1000) : undefined
    if (createdAt === undefined || issuedAt < createdAt - PROVIDER_CLOCK_SKEW_SECONDS)
      throw refuse('the access token belongs to a client or tenant that no longer exists')
    return principal
  }
}

export interface SecuredRoute {
  method: string
  url: string
  roles: readonly Role[]
}

function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization
  const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null
  if (!match?.[1]) throw new UnauthenticatedError('a Bearer access token is required')
  return match[1]
}

/**
 * When the access token of a guarded request expires (ms since the epoch): its `exp`, which the
 * guard verified (our tokens and a provider's carry one); undefined for a token without it.
 */
export function tokenExpiry(request: FastifyRequest): number | undefined {
  try {
    const { exp } = decodeJwt(bearerToken(request))
    return typeof exp === 'number' ? exp * 1000 : undefined
  } catch {
    return undefined
  }
}

/**
 * Role-based protection declared once per route as `config: { roles }`: the hook verifies the
 * token, checks the roles, resolves the tenant scope, and adds `security` to the route's OpenAPI
 * entry. Returns the list of secured routes (tests run the role matrix over it).
 */
export function registerRoleGuard(app: FastifyInstance, verify: VerifyAccessToken): SecuredRoute[] {
  const secured: SecuredRoute[] = []
  app.decorateRequest('principal', null as unknown as Principal)
  app.decorateRequest('tenantScope', null)

  app.addHook('onRoute', (route) => {
    const roles = route.config?.roles
    if (!roles) return
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const method of methods) if (method !== 'HEAD') secured.push({ method, url: route.url, roles })
    route.schema = {
      ...route.schema,
      security: [{ oauth2: [...roles] }],
      description: [route.schema?.description, `Roles (any of): ${roles.map((r) => `\`${r}\``).join(', ')}.`]
        .filter(Boolean)
        .join('\n\n'),
    }
    const guard: onRequestHookHandler = async (request) => {
      const principal = await verify(bearerToken(request))
      if (!hasAnyRole(principal, roles)) {
        throw new ForbiddenError(`this operation needs one of the roles ${roles.join(', ')}`)
      }
      request.principal = principal
      request.tenantScope = resolveTenantScope(request, principal)
    }
    const existing = route.onRequest
    route.onRequest = existing ? [guard, ...(Array.isArray(existing) ? existing : [existing])] : [guard]
  })
  return secured
}

/**
 * DESIGN.md "Management API shape": a tenant-bound client acts on its own tenant only, and a path
 * tenant that is not its own reads as not found; an operator (no tenant) may name any tenant.
 */
function resolveTenantScope(request: FastifyRequest, principal: Principal): string | null {
  const pathTenant = (request.params as { tenantId?: string } | undefined)?.tenantId
  if (pathTenant === undefined) return principal.tenantId ?? null
  if (principal.tenantId !== undefined && principal.tenantId !== pathTenant)
    throw new NotFoundError('tenant', pathTenant)
  return pathTenant
}

/** The tenant a tenant-owned route acts on; an operator on a shorthand route must name one. */
export function requireTenantScope(request: FastifyRequest): string {
  if (request.tenantScope !== null) return request.tenantScope
  const message = 'an operator token has no tenant: use the /api/tenants/{tenantId}/… form of this route'
  throw new InvalidInputError(message, [{ path: 'path.tenantId', message }])
}
