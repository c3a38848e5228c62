import { testDatabases } from '@credential-service/db-schema/testing'
import { SERVICE_VERSION } from '@credential-service/server-kit'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, startAllInOne } from './harness'

describe.each(testDatabases())('all-in-one origin on $name', (testDatabase) => {
  let app: FastifyInstance
  let clientId: string
  let secret: string

  beforeAll(async () => {
    ;({ app, rootClientId: clientId, rootSecret: secret } = await startAllInOne(testDatabase))
    await app.ready()
  })
  afterAll(() => app.close())

  it('spec §9.1: GET / names the service without any version', async () => {
    const response = await app.inject({ url: '/' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toStrictEqual({ name: 'credential-service' })
    expect(response.body).not.toContain(SERVICE_VERSION)
  })

  it('spec §9.1: every response carries X-Service-Version, errors included', async () => {
    for (const url of [
      '/',
      '/api/health',
      '/api/tenants',
      '/issuers/x/unknown',
      '/verifiers/x/unknown',
      '/healthz',
    ]) {
      const response = await app.inject({ url })
      expect(response.headers['x-service-version'], url).toBe(SERVICE_VERSION)
    }
  })

  it('GET /api/health reports status, version and the database', async () => {
    const response = await app.inject({ url: '/api/health' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toStrictEqual({
      status: 'ok',
      version: SERVICE_VERSION,
      database: { status: 'up', kind: testDatabase.name },
    })
  })

  it('the root client from AUTH_CLIENT_ID / AUTH_CLIENT_SECRET is an operator', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/oauth2/token',
      payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret },
    })
    expect(response.statusCode).toBe(200)
    expect(response.json().scope).toBe('tenant:manage')
  })

  it('spec §4: /api/docs serves the UI and /api/docs-json an OpenAPI document with roles and oauth2', async () => {
    const ui = await app.inject({ url: '/api/docs/' })
    expect(ui.statusCode).toBe(200)
    expect(ui.headers['content-type']).toContain('text/html')
    // Every script and stylesheet the page loads (served from the lazily built docs app, issue 20).
    const assets = [...ui.body.matchAll(/(?:src|href)="\.\/([^"]+)"/g)].map((match) => match[1] as string)
    expect(assets.some((asset) => asset.endsWith('.js'))).toBe(true)
    for (const asset of assets) {
      const loaded = await app.inject({ url: `/api/docs/${asset}` })
      expect(loaded.statusCode, asset).toBe(200)
      expect(loaded.body.length, asset).toBeGreaterThan(0)
    }
    const doc = (await app.inject({ url: '/api/docs-json' })).json()
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.components.securitySchemes.oauth2.flows.clientCredentials.tokenUrl).toBe('/api/oauth2/token')
    const listTenants = doc.paths['/api/tenants'].get
    expect(listTenants.operationId).toBe('listTenants')
    expect(listTenants.security).toStrictEqual([{ oauth2: ['tenant:manage', 'tenant:read'] }])
    expect(listTenants.responses['403']).toBeDefined()
    expect(doc.paths['/api/tenants/{tenantId}/clients/{clientId}/rotate-secret'].post.operationId).toBe(
      'rotateClientSecretOfTenant',
    )
    // Only the management API is described there; protocol endpoints are not under /api.
    expect(Object.keys(doc.paths).every((path) => path.startsWith('/api/'))).toBe(true)
  })

  it('SD-JWT VC issuer metadata and the issuer JWKS publish a key chain created through /api', async () => {
    const root = await bearer(app, clientId, secret)
    const tenant = `jwks-${crypto.randomUUID().slice(0, 8)}`
    await app.inject({
      method: 'POST',
      url: '/api/tenants',
      headers: root,
      payload: { id: tenant, name: tenant },
    })
    const created = (
      await app.inject({
        method: 'POST',
        url: `/api/tenants/${tenant}/clients`,
        headers: root,
        payload: { roles: ['key:manage'] },
      })
    ).json()
    const keyAdmin = await bearer(app, created.clientId, created.clientSecret)
    const chain = (
      await app.inject({
        method: 'POST',
        url: '/api/key-chains',
        headers: keyAdmin,
        payload: { source: 'generate', id: 'pid' },
      })
    ).json()

    const jwks = await app.inject({ url: `/issuers/${tenant}/jwks` })
    expect(jwks.statusCode).toBe(200)
    expect(jwks.json().keys).toStrictEqual([
      {
        ...chain.activeKey.publicJwk,
        kid: chain.activeKey.kid,
        alg: 'ES256',
        use: 'sig',
        x5c: [expect.any(String)],
      },
    ])
    const metadata = await app.inject({ url: `/.well-known/jwt-vc-issuer/issuers/${tenant}` })
    expect(metadata.json()).toStrictEqual({
      issuer: `http://localhost:3000/issuers/${tenant}`,
      jwks: jwks.json(),
    })
    expect((await app.inject({ url: '/issuers/no-such-tenant/jwks' })).statusCode).toBe(404)
  })

  it('protocol paths answer OAuth-style errors, /api paths problem+json', async () => {
    const protocol = await app.inject({ url: '/issuers/acme/nothing' })
    expect(protocol.statusCode).toBe(404)
    expect(protocol.json().error).toBe('not_found')
    const api = await app.inject({ url: '/api/nothing' })
    expect(api.headers['content-type']).toContain('application/problem+json')
  })
})
