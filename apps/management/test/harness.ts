import { randomBytes } from 'node:crypto'
import type { Role } from '@credential-service/core-domain'
import { deriveManagementSigningKey } from '@credential-service/crypto'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { TEST_MASTER_SECRET, type TestDatabase } from '@credential-service/db-schema/testing'
import {
  createKeyRuntime,
  createMetrics,
  createServer,
  type KeyRuntime,
  type KeyRuntimeOptions,
  type Metrics,
  type SecuredRoute,
} from '@credential-service/server-kit'
import type { FastifyInstance, FastifyPluginAsync, RouteOptions } from 'fastify'
import {
  bootstrapRootClient,
  buildManagementApp,
  type ManagementConfig,
  parseManagementConfig,
} from '../src/app'
import { bearer } from '../src/testing'

/** Creates tenants through the API as `auth` (an operator); any answer but 201 stops the set-up. */
export async function seedTenants(app: FastifyInstance, auth: Record<string, string>, ids: string[]) {
  for (const id of ids) {
    const response = await app.inject({
      method: 'POST',
      url: '/api/tenants',
      headers: auth,
      payload: { id, name: id },
    })
    if (response.statusCode !== 201) throw new Error(`seed tenant ${id}: ${response.body}`)
  }
}

export interface TestClient {
  clientId: string
  clientSecret: string
  token: string
  auth: { authorization: string }
}

export interface Harness {
  app: FastifyInstance
  keys: KeyRuntime
  /** The app's metrics (key provider calls are reported to them). */
  metrics: Metrics
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
    MASTER_SECRET: TEST_MASTER_SECRET,
    AUTH_CLIENT_ID: random('root'),
    AUTH_CLIENT_SECRET: randomBytes(24).toString('base64url'),
    LOG_LEVEL: 'silent',
    // Far above the default: suites fail authentications on purpose; the rate-limit suite sets its own.
    RATE_LIMIT_TOKEN_PER_MINUTE: '100000',
    ...overrides,
  })
}

/** The management app as production builds it, on a real database with real migrations. */
export interface HarnessOptions {
  /** External key providers (local Vault / KMS implementations). */
  providers?: KeyRuntimeOptions['providers']
  /** The clock of the app; defaults to real time. */
  now?: () => Date
  /** Captures every log line at trace level. */
  logLines?: string[]
  /** Runs the session retention job this often (seconds); off by default. */
  sessionRetentionSeconds?: number
  /** Environment variables on top of the test configuration. */
  env?: Record<string, string>
  /** Filled with every route as registered (method, url, schema), e.g. to find its body schema. */
  routes?: RouteOptions[]
}

/** The plugin, with an `onRoute` hook ahead of it that records its routes. */
function recordingRoutes(plugin: FastifyPluginAsync, routes: RouteOptions[]): FastifyPluginAsync {
  return async (scope, options) => {
    scope.addHook('onRoute', (route) => {
      routes.push(route)
    })
    await plugin(scope, options)
  }
}

export async function createHarness(
  testDatabase: TestDatabase,
  options: HarnessOptions = {},
): Promise<Harness> {
  const database = await testDatabase.open()
  const config = testConfig({ KEY_ROTATION_CHECK_SECONDS: '0', ...options.env })
  await bootstrapRootClient(database.db, config)
  const securedRoutes: SecuredRoute[] = []
  const metrics = createMetrics({ processMetrics: false })
  const keys = createKeyRuntime({
    config,
    db: database.db,
    observeProviderCall: metrics.keyProviderCall,
    ...(options.providers ? { providers: options.providers } : {}),
    ...(options.now ? { now: options.now } : {}),
  })
  const logLines = options.logLines
  const management = buildManagementApp({
    config,
    database,
    signingKey: await deriveManagementSigningKey(config.MASTER_SECRET),
    securedRoutes,
    keys,
    metrics,
    sessionRetentionSeconds: options.sessionRetentionSeconds ?? 0,
    ...(options.now ? { now: options.now } : {}),
  })
  const app = await createServer({
    logLevel: logLines ? 'trace' : 'silent',
    ...(logLines ? { logStream: { write: (line: string) => void logLines.push(line) } } : {}),
    ping: database.ping,
    apps: [options.routes ? recordingRoutes(management, options.routes) : management],
  })
  await app.ready()

  const tokenFor = async (clientId: string, clientSecret: string): Promise<string> =>
    (await bearer(app, clientId, clientSecret)).authorization.slice('Bearer '.length)

  const asClient = async (clientId: string, clientSecret: string): Promise<TestClient> => {
    const token = await tokenFor(clientId, clientSecret)
    return { clientId, clientSecret, token, auth: { authorization: `Bearer ${token}` } }
  }
  const root = await asClient(config.AUTH_CLIENT_ID as string, config.AUTH_CLIENT_SECRET as string)

  const tenantA = random('ta')
  const tenantB = random('tb')
  await seedTenants(app, root.auth, [tenantA, tenantB])

  return {
    app,
    keys,
    metrics,
    database,
    config,
    securedRoutes,
    root,
    tenantA,
    tenantB,
    tokenFor,
    async createClient(tenantId, roles) {
      const url = tenantId === null ? '/api/clients' : `/api/tenants/${tenantId}/clients`
      // A fresh root token: suites that move the clock would find the first one expired.
      const headers = { authorization: `Bearer ${await tokenFor(root.clientId, root.clientSecret)}` }
      const response = await app.inject({ method: 'POST', url, headers, payload: { roles } })
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
