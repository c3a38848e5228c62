import type { Role } from '@credential-service/core-domain'
import type { Session } from './auth/session'

/** The console's pages and the roles their API routes require (apps/management/src/routes). */
export const PAGES = {
  tenants: {
    path: '/tenants',
    label: 'Tenants',
    read: ['tenant:manage', 'tenant:read'],
    write: ['tenant:manage'],
    tenantScoped: false,
  },
  clients: {
    path: '/clients',
    label: 'API clients',
    read: ['tenant:manage', 'tenant:admin', 'tenant:read'],
    write: ['tenant:manage', 'tenant:admin'],
    // An operator without a picked tenant sees the operator clients (`/api/clients`).
    tenantScoped: false,
  },
  // Issue 42 item 5: the tenant's issuer display (PATCH /api/tenants/{id}, POST …/logos).
  'issuer-branding': {
    path: '/issuer-branding',
    label: 'Issuer branding',
    read: ['tenant:manage', 'tenant:admin'],
    write: ['tenant:manage', 'tenant:admin'],
    tenantScoped: true,
  },
  'key-chains': {
    path: '/key-chains',
    label: 'Key chains',
    read: ['key:manage', 'key:read'],
    write: ['key:manage'],
    tenantScoped: true,
  },
  'credential-configs': {
    path: '/credential-configs',
    label: 'Credential configurations',
    read: ['issuance:config'],
    write: ['issuance:config'],
    tenantScoped: true,
  },
  'presentation-configs': {
    path: '/presentation-configs',
    label: 'Presentation configurations',
    read: ['presentation:config'],
    write: ['presentation:config'],
    tenantScoped: true,
  },
  offers: {
    path: '/offers',
    label: 'Offers',
    read: ['issuance:offer'],
    write: ['issuance:offer'],
    tenantScoped: true,
  },
  'presentation-requests': {
    path: '/presentation-requests',
    label: 'Presentation requests',
    read: ['presentation:request'],
    write: ['presentation:request'],
    tenantScoped: true,
  },
  // Each kind of session needs its own role: the API answers the kinds the roles cover.
  sessions: {
    path: '/sessions',
    label: 'Sessions',
    read: ['issuance:offer', 'presentation:request'],
    write: ['issuance:offer', 'presentation:request'],
    tenantScoped: true,
  },
  // The lists: `issuance:offer` or `issuance:config`; revoke, suspend, reinstate: `issuance:offer`.
  'status-lists': {
    path: '/status-lists',
    label: 'Status lists',
    read: ['issuance:offer', 'issuance:config'],
    write: ['issuance:offer'],
    tenantScoped: true,
  },
  // Operations pages (issue 22): providers, webhooks, registrar, schema metadata, audit, metrics.
  'attribute-providers': {
    path: '/attribute-providers',
    label: 'Attribute providers',
    read: ['issuance:config'],
    write: ['issuance:config'],
    tenantScoped: true,
  },
  'login-providers': {
    path: '/login-providers',
    label: 'Login providers',
    read: ['issuance:config'],
    write: ['issuance:config'],
    tenantScoped: true,
  },
  // Issue 41: external OAuth servers whose access tokens the credential endpoint accepts.
  'auth-servers': {
    path: '/auth-servers',
    label: 'Authorization servers',
    read: ['issuance:config'],
    write: ['issuance:config'],
    tenantScoped: true,
  },
  'wallet-providers': {
    path: '/wallet-providers',
    label: 'Wallet providers',
    read: ['issuance:config'],
    write: ['issuance:config'],
    tenantScoped: true,
  },
  // Certificates issuers may chain to, named by presentation configurations: either configuration role.
  'trust-lists': {
    path: '/trust-lists',
    label: 'Trust lists',
    read: ['presentation:config', 'issuance:config'],
    write: ['presentation:config', 'issuance:config'],
    tenantScoped: true,
  },
  // Issue 39: the tenant's OpenID Federation membership, a trust framework like the registrar's.
  federation: {
    path: '/federation',
    label: 'Federation',
    read: ['registrar:manage'],
    write: ['registrar:manage'],
    tenantScoped: true,
  },
  // Endpoints, their deliveries and replays: either configuration role.
  'webhook-endpoints': {
    path: '/webhook-endpoints',
    label: 'Webhook endpoints',
    read: ['issuance:config', 'presentation:config'],
    write: ['issuance:config', 'presentation:config'],
    tenantScoped: true,
  },
  registrar: {
    path: '/registrar',
    label: 'Registrar',
    read: ['registrar:manage'],
    write: ['registrar:manage'],
    tenantScoped: true,
  },
  'schema-metadata': {
    path: '/schema-metadata',
    label: 'Schema metadata',
    read: ['issuance:config'],
    write: ['issuance:config'],
    tenantScoped: true,
  },
  // An operator reads every tenant's events (or the picked tenant's); a tenant admin its own.
  'audit-events': {
    path: '/audit-events',
    label: 'Audit events',
    read: ['tenant:manage', 'tenant:admin'],
    write: [],
    tenantScoped: false,
  },
  // A tenant-bound client gets its tenant's series; an operator client the whole process.
  metrics: { path: '/metrics', label: 'Metrics', read: ['metrics:read'], write: [], tenantScoped: false },
  health: { path: '/health', label: 'Health and version', read: [], write: [], tenantScoped: false },
} as const satisfies Record<
  string,
  { path: string; label: string; read: readonly Role[]; write: readonly Role[]; tenantScoped: boolean }
>

export type PageKey = keyof typeof PAGES
export const PAGE_KEYS = Object.keys(PAGES) as PageKey[]

const hasAny = (session: Session, roles: readonly Role[]) =>
  roles.length === 0 || roles.some((role) => session.roles.includes(role))

/** Whether the navigation shows the page and its route renders it. */
export const canRead = (session: Session, page: PageKey) => hasAny(session, PAGES[page].read)
/** Whether the page offers its create, rotate and delete actions. */
export const canWrite = (session: Session, page: PageKey) =>
  PAGES[page].write.length > 0 && hasAny(session, PAGES[page].write)

/** An operator: `tenant:manage` and bound to no tenant; picks the tenant to work on. */
export const isOperator = (session: Session) =>
  session.tenantId === undefined && session.roles.includes('tenant:manage')
