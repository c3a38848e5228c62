import { z } from 'zod'

/** The eleven roles of interface spec §5 "Roles". */
export const ROLES = [
  'tenant:manage',
  'tenant:read',
  'tenant:admin',
  'issuance:offer',
  'issuance:config',
  'presentation:request',
  'presentation:config',
  'key:manage',
  'key:read',
  'registrar:manage',
  'metrics:read',
] as const

/** What each role lets a client do (interface spec §5 names the areas; this is the service's reading). */
export const ROLE_DESCRIPTIONS: Record<(typeof ROLES)[number], string> = {
  'tenant:manage':
    'Operator, bound to no tenant: create and list tenants, manage every API client and read the audit log; act on any tenant within the other roles it holds',
  'tenant:read': 'Read tenants and API clients',
  'tenant:admin':
    "Manage the tenant's API clients (create, update, rotate secrets, delete) and read its audit log",
  'issuance:offer':
    'Create credential offers, follow and delete issuance sessions, revoke, suspend and reinstate credentials, read status lists',
  'issuance:config':
    'Manage credential configurations, attribute, login and wallet providers, webhook endpoints and their deliveries; sign schema metadata',
  'presentation:request':
    'Create presentation requests, follow and delete their sessions, read their results',
  'presentation:config': 'Manage presentation configurations, webhook endpoints and their deliveries',
  'key:manage': 'Create, import, update, rotate and delete key chains',
  'key:read': 'Read key chains and their certificates',
  'registrar:manage':
    'Manage the registrar connection, registration and access certificates, and the OpenID Federation membership',
  'metrics:read': 'Read the Prometheus metrics',
}

export const zRole = z.enum(ROLES).describe('Role value (interface spec §5)').meta({ id: 'Role' })
export type Role = z.infer<typeof zRole>

/** The authenticated caller of a management route, from a verified access token. */
export interface Principal {
  clientId: string
  /** Tenant the client belongs to; undefined for operator clients (spec §5 rule 3). */
  tenantId: string | undefined
  /**
   * Generation of the tenant when the token was issued (a tenant deleted and created again with
   * the same id has a new one), so a token outlives neither; undefined for operator clients.
   */
  tenantGeneration?: string | undefined
  roles: readonly Role[]
}

export function hasAnyRole(principal: Principal, roles: readonly Role[]): boolean {
  return roles.some((role) => principal.roles.includes(role))
}

export function isOperator(principal: Principal): boolean {
  return principal.tenantId === undefined && principal.roles.includes('tenant:manage')
}

/**
 * The roles a client may be given (spec §5 rule 3): a tenant's client any but `tenant:manage`, an
 * operator client (no tenant) any. The API refuses the others (checkClientTenantBinding) and the
 * console's role pickers offer only these: one rule for both.
 */
export function grantableRoles(tenantId: string | undefined): Role[] {
  return ROLES.filter((role) => tenantId === undefined || role !== 'tenant:manage')
}

/**
 * Spec §5 rules 2 and 3: a client belongs to at most one tenant, and a `tenant:manage`
 * client belongs to none. Returns the problem, or undefined when the assignment is valid.
 */
export function checkClientTenantBinding(
  roles: readonly Role[],
  tenantId: string | undefined,
): string | undefined {
  const grantable = grantableRoles(tenantId)
  if (roles.some((role) => !grantable.includes(role))) {
    return "a client with role 'tenant:manage' manages the whole service and cannot belong to a tenant"
  }
  if (tenantId === undefined && !roles.includes('tenant:manage')) {
    return "a client without role 'tenant:manage' must belong to a tenant"
  }
  return undefined
}
