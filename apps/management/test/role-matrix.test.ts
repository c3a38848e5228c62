import { ROLES, type Role } from '@credential-service/core-domain'
import { testDatabases } from '@credential-service/db-schema/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestClient } from './harness'

// Spec §5 rule 4: every route declares its roles. The matrix runs over every secured route the
// app registered, so a new route is covered the moment it exists.
describe.each(testDatabases())('role matrix on $name', (testDatabase) => {
  let h: Harness
  const byRole = new Map<Role, TestClient>()

  beforeAll(async () => {
    h = await createHarness(testDatabase)
    for (const role of ROLES) {
      byRole.set(role, role === 'tenant:manage' ? h.root : await h.createClient(h.tenantA, [role]))
    }
  }, 120_000)
  afterAll(() => h.close())

  const fill = (url: string, tenantId: string) =>
    url.replace(':tenantId', tenantId).replace(/:[A-Za-z]+/g, 'does-not-exist')

  it('covers the management routes', () => {
    const urls = new Set(h.securedRoutes.map((r) => `${r.method} ${r.url}`))
    for (const route of [
      'GET /api/tenants',
      'DELETE /api/tenants/:tenantId',
      'POST /api/clients',
      'POST /api/tenants/:tenantId/clients/:clientId/rotate-secret',
      // Issue 14: the audit trail and the sessions collection.
      'GET /api/audit-events',
      'GET /api/tenants/:tenantId/audit-events',
      'GET /api/tenants/:tenantId/sessions',
      'DELETE /api/sessions/:id',
      'POST /api/tenants/:tenantId/sessions/:id/result',
      // The webhook outbox: deliveries of an endpoint, and their replay.
      'GET /api/webhook-endpoints/:webhookEndpointId/deliveries',
      'GET /api/tenants/:tenantId/webhook-endpoints/:webhookEndpointId/deliveries/:deliveryId',
      'POST /api/tenants/:tenantId/webhook-endpoints/:webhookEndpointId/deliveries/:deliveryId/replay',
      'POST /api/webhook-endpoints/:webhookEndpointId/deliveries/replay-failed',
      // Issue 14: the registrar integration.
      'PUT /api/tenants/:tenantId/registrar',
      'POST /api/registrar/relying-party',
      'POST /api/registrar/access-certificates',
      'POST /api/registrar/registration-certificates',
      // Wallet providers trusted for wallet and key attestations.
      'POST /api/tenants/:tenantId/wallet-providers',
      'PUT /api/wallet-providers/:walletProviderId',
      // Login providers of the authorization code flow.
      'GET /api/tenants/:tenantId/login-providers',
      'POST /api/login-providers',
      'PUT /api/tenants/:tenantId/login-providers/:loginProviderId',
      'DELETE /api/login-providers/:loginProviderId',
      // Token Status Lists and the status changes of issued credentials.
      'GET /api/tenants/:tenantId/status-lists',
      'GET /api/status-lists/:statusListId',
      'POST /api/credential-status',
      'POST /api/tenants/:tenantId/sessions/:id/status',
    ]) {
      expect(urls).toContain(route)
    }
  })

  it('spec §5: no token is 401 with WWW-Authenticate: Bearer on every route', async () => {
    for (const route of h.securedRoutes) {
      const response = await h.app.inject({ method: route.method as 'GET', url: fill(route.url, h.tenantA) })
      expect(response.statusCode, `${route.method} ${route.url}`).toBe(401)
      expect(response.headers['www-authenticate']).toBe('Bearer realm="credential-service"')
      expect(response.headers['content-type']).toContain('application/problem+json')
    }
  })

  it('RFC 6750 §3.1: a forged or expired token is 401 invalid_token on every route', async () => {
    const forged = `${h.root.token.slice(0, -4)}AAAA`
    for (const route of h.securedRoutes) {
      const response = await h.app.inject({
        method: route.method as 'GET',
        url: fill(route.url, h.tenantA),
        headers: { authorization: `Bearer ${forged}` },
      })
      expect(response.statusCode, `${route.method} ${route.url}`).toBe(401)
      expect(response.headers['www-authenticate']).toContain('error="invalid_token"')
    }
  })

  it('spec §5 rule 4: a client holding none of the route’s roles is 403', async () => {
    // One client per distinct role set: each costs a bcrypt hash and compare, and routes share sets.
    const clients = new Map<string, Promise<TestClient>>()
    for (const route of h.securedRoutes) {
      const others = ROLES.filter((role) => !route.roles.includes(role) && role !== 'tenant:manage')
      const key = others.join(',')
      if (!clients.has(key)) clients.set(key, h.createClient(h.tenantA, others))
      const client = await (clients.get(key) as Promise<TestClient>)
      const response = await h.app.inject({
        method: route.method as 'GET',
        url: fill(route.url, h.tenantA),
        headers: client.auth,
        payload: route.method === 'GET' || route.method === 'DELETE' ? undefined : {},
      })
      expect(response.statusCode, `${route.method} ${route.url} with ${others.join(',')}`).toBe(403)
      expect(response.json().code).toBe('forbidden')
    }
  }, 120_000)

  it('spec §5 rule 4: each declared role passes the role check', async () => {
    for (const route of h.securedRoutes) {
      for (const role of route.roles) {
        const client = byRole.get(role) as TestClient
        // A tenant that does not exist keeps the call harmless; what matters is it is not 401/403.
        const response = await h.app.inject({
          method: route.method as 'GET',
          url: fill(route.url, 'no-such-tenant'),
          headers: client.auth,
          payload: route.method === 'GET' || route.method === 'DELETE' ? undefined : {},
        })
        expect([401, 403], `${route.method} ${route.url} as ${role}`).not.toContain(response.statusCode)
      }
    }
  })
})
