import { randomBytes } from 'node:crypto'
import type { Role } from '@credential-service/core-domain'
import { deriveManagementSigningKey } from '@credential-service/crypto'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import type { TestDatabase } from '@credential-service/db-schema/testing'
import { createServer, type SecuredRoute } from '@credential-service/server-kit'
import type { FastifyInstance } from 'fastify'
import {
  bootstrapRootClient,
  buildManagementApp,
  type ManagementConfig,
  parseManagementConfig,
} from '../src/app'

export interface TestClient {
  clientId: string
  clientSecret: string
  token: string
  auth: { authorization: string }
}

export interface Harness {
  app: FastifyInstance
  database: DatabaseHandle
  config: ManagementConfig
  securedRoutes: SecuredRoute[]
  root: TestClient
  /** Two tenants with random ids, seeded for each suite. */
  tenantA: string
  tenantB: string
  tokenFor(clientId: string, clientSecret: string): Promise<string>
  createClient(tenantId: string | null, roles: Role[]): Promise<TestClient>
  close(): Promise<void>
}

export const random = (prefix: string) => `${prefix}-${randomBytes(6).toString('hex')}`

export function testConfig(overrides: Record<string, string> = {}): ManagementConfig {
  return parseManagementConfig({
    PUBLIC_URL: 'https://issuer.test',
    MASTER_SECRET: 'test-master-secret-that-is-long-enough-0123456789',
    AUTH_CLIENT_ID: random('root'),
    AUTH_CLIENT_SECRET: randomBytes(24).toString('base64url'),
    LOG_LEVEL: 'silent',
    ...overrides,
  })
}

/** The management app as production builds it, on a real database with real migrations. */
export async function createHarness(testDatabase: TestDatabase): Promise<Harness> {
  const database = await testDatabase.open()
  const config = testConfig()
  await bootstrapRootClient(database.db, config)
  const securedRoutes: SecuredRoute[] = []
  const app = await createServer({
    logLevel: 'silent',
    ping: database.ping,
    apps: [
      buildManagementApp({
        config,
        database,
        signingKey: await deriveManagementSigningKey(config.MASTER_SECRET),
        securedRoutes,
      }),
    ],
  })
  await app.ready()

  async function tokenFor(clientId: string, clientSecret: string): Promise<string> {
    const response = await app.inject({
      method: 'POST',
      url: '/api/oauth2/token',
      payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
    })
    if (response.statusCode !== 200)
      throw new Error(`token for ${clientId}: ${response.statusCode} ${response.body}`)
    return response.json().access_token
  }

  const asClient = async (clientId: string, clientSecret: string): Promise<TestClient> => {
    const token = await tokenFor(clientId, clientSecret)
    return { clientId, clientSecret, token, auth: { authorization: `Bearer ${token}` } }
  }
  const root = await asClient(config.AUTH_CLIENT_ID as string, config.AUTH_CLIENT_SECRET as string)

  const tenantA = random('ta')
  const tenantB = random('tb')
  for (const id of [tenantA, tenantB]) {
    const response = await app.inject({
      method: 'POST',
      url: '/api/tenants',
      headers: root.auth,
      payload: { id, name: id },
    })
    if (response.statusCode !== 201) throw new Error(`seed tenant ${id}: ${response.body}`)
  }

  return {
    app,
    database,
    config,
    securedRoutes,
    root,
    tenantA,
    tenantB,
    tokenFor,
    async createClient(tenantId, roles) {
      const url = tenantId === null ? '/api/clients' : `/api/tenants/${tenantId}/clients`
      const response = await app.inject({ method: 'POST', url, headers: root.auth, payload: { roles } })
      if (response.statusCode !== 201) throw new Error(`create client: ${response.body}`)
      const created = response.json()
      return asClient(created.clientId, created.clientSecret)
    },
    async close() {
      await app.close()
      await database.close()
    },
  }
}
