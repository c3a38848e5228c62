import { deriveManagementSigningKey } from '@credential-service/crypto'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { TEST_MASTER_SECRET, testDatabases } from '@credential-service/db-schema/testing'
import {
  createMetrics,
  createServer,
  metricsEndpoint,
  registerManagementTokens,
} from '@credential-service/server-kit'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildIssuerApp, parseIssuerConfig } from '../src/app'

const PUBLIC_URL = 'http://localhost:3000'

describe.each(testDatabases())('standalone issuer GET /api/metrics on $name', (testDatabase) => {
  let database: DatabaseHandle
  let app: FastifyInstance
  let token: (roles: string[], issuer?: string) => Promise<Record<string, string>>

  beforeAll(async () => {
    database = await testDatabase.open()
    const config = parseIssuerConfig({ PUBLIC_URL, MASTER_SECRET: TEST_MASTER_SECRET })
    // As apps/issuer/src/main.ts composes it.
    const metrics = createMetrics({ tenantLabelLimit: config.METRICS_TENANT_LABEL_LIMIT, database })
    app = await createServer({
      logLevel: 'silent',
      ping: database.ping,
      apps: [buildIssuerApp({ config, database, metrics }), metricsEndpoint({ config, database, metrics })],
    })
    const key = await deriveManagementSigningKey(TEST_MASTER_SECRET)
    token = async (roles, issuer = `${PUBLIC_URL}/api`) => {
      const { issue } = await registerManagementTokens(Fastify(), { key, issuer, lifetimeSeconds: 300 })
      const { accessToken } = await issue({
        clientId: 'prometheus',
        roles: roles as never,
        tenantId: undefined,
      })
      return { authorization: `Bearer ${accessToken}` }
    }
  })
  afterAll(async () => {
    await app.close()
    await database.close()
  })

  it('spec §5: the issuer pod answers its own metrics to a management token with metrics:read', async () => {
    await app.inject({ url: '/.well-known/openid-credential-issuer/issuers/nobody-here' })
    const response = await app.inject({
      url: '/api/metrics',
      headers: await token(['tenant:manage', 'metrics:read']),
    })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(response.body).toContain(
      'credential_service_http_request_errors_total{app="issuer",tenant="_other",route="/.well-known/openid-credential-issuer/issuers/:tenant",method="GET",status="404"} 1',
    )
    expect(response.body).toContain('credential_service_db_pool_max_connections')
    expect(response.body).not.toContain('nobody-here')
  })

  it('spec §5: 401 problem+json without a token or with a token of another issuer, 403 without the role', async () => {
    const none = await app.inject({ url: '/api/metrics' })
    expect(none.statusCode).toBe(401)
    expect(none.headers['content-type']).toMatch(/^application\/problem\+json/)
    const foreign = await app.inject({
      url: '/api/metrics',
      headers: await token(['tenant:manage', 'metrics:read'], 'https://elsewhere.example/api'),
    })
    expect(foreign.statusCode).toBe(401)
    const withoutRole = await app.inject({ url: '/api/metrics', headers: await token(['tenant:manage']) })
    expect(withoutRole.statusCode).toBe(403)
    expect(withoutRole.json()).toMatchObject({ status: 403, code: 'forbidden' })
  })
})
