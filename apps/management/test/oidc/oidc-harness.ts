import { randomBytes } from 'node:crypto'
import type { Role } from '@credential-service/core-domain'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import type { TestDatabase } from '@credential-service/db-schema/testing'
import { createKeyRuntime } from '@credential-service/server-kit'
import type { FastifyInstance } from 'fastify'
import { bootstrapRootClient, type ManagementConfig } from '../../src/app'
import { managementServer } from '../../src/testing'
import { random, seedTenants, testConfig } from '../harness'
import type { KeycloakStandIn } from './keycloak-stand-in'

export interface OidcClient {
  clientId: string
  clientSecret: string
  auth: { authorization: string }
}

export interface OidcHarness {
  app: FastifyInstance
  database: DatabaseHandle
  config: ManagementConfig
  root: OidcClient
  tenantA: string
  tenantB: string
  logLines: string[]
  /** A token of the provider (client credentials at its token endpoint); throws unless 200. */
  providerToken(clientId: string, clientSecret: string, params?: Record<string, string>): Promise<string>
  /** Creates a client through the API (as root) and gets its first token from the provider. */
  createClient(tenantId: string | null, roles: Role[]): Promise<OidcClient>
  close(): Promise<void>
}

/** The management app in OIDC mode against the stand-in, as production builds it. */
export async function createOidcHarness(
  testDatabase: TestDatabase,
  standIn: KeycloakStandIn,
  options: {
    env?: Record<string, string>
    now?: () => Date
    /** Seeds a root token and two tenants (default); off when the provider is down on purpose. */
    seed?: boolean
    /** An open database to use (and leave open) instead of a new one. */
    database?: DatabaseHandle
  } = {},
): Promise<OidcHarness> {
  const database = options.database ?? (await testDatabase.open())
  const config = testConfig({
    KEY_ROTATION_CHECK_SECONDS: '0',
    OIDC: standIn.issuer,
    ...(standIn.issuer === standIn.internalIssuer
      ? {}
      : { OIDC_INTERNAL_ISSUER_URL: standIn.internalIssuer }),
    OIDC_CLIENT_ID: standIn.adminClientId,
    OIDC_CLIENT_SECRET: standIn.adminClientSecret,
    AUTH_CLIENT_ID: random('root'),
    AUTH_CLIENT_SECRET: randomBytes(24).toString('base64url'),
    ...options.env,
  })
  await bootstrapRootClient(database.db, config)
  const logLines: string[] = []
  const app = await managementServer(
    {
      config,
      database,
      keys: createKeyRuntime({ config, db: database.db }),
      sessionRetentionSeconds: 0,
      ...(options.now ? { now: options.now } : {}),
    },
    { logLevel: 'info', logStream: { write: (line: string) => void logLines.push(line) } },
  )
  await app.ready()

  async function providerToken(clientId: string, clientSecret: string, params?: Record<string, string>) {
    const answer = await standIn.token(clientId, clientSecret, params)
    if (answer.status !== 200 || !answer.body.access_token)
      throw new Error(`provider token for ${clientId}: ${answer.status} ${JSON.stringify(answer.body)}`)
    return answer.body.access_token
  }
  const asClient = async (clientId: string, clientSecret: string): Promise<OidcClient> => ({
    clientId,
    clientSecret,
    auth: { authorization: `Bearer ${await providerToken(clientId, clientSecret)}` },
  })

  const seed = options.seed ?? true
  const root = seed
    ? await asClient(config.AUTH_CLIENT_ID as string, config.AUTH_CLIENT_SECRET as string)
    : { clientId: '', clientSecret: '', auth: { authorization: '' } }
  const tenantA = random('ta')
  const tenantB = random('tb')
  if (seed) await seedTenants(app, root.auth, [tenantA, tenantB])

  return {
    app,
    database,
    config,
    root,
    tenantA,
    tenantB,
    logLines,
    providerToken,
    async createClient(tenantId, roles) {
      const url = tenantId === null ? '/api/clients' : `/api/tenants/${tenantId}/clients`
      const response = await app.inject({ method: 'POST', url, headers: root.auth, payload: { roles } })
      if (response.statusCode !== 201) throw new Error(`create client: ${response.body}`)
      const created = response.json()
      return asClient(created.clientId, created.clientSecret)
    },
    async close() {
      await app.close()
      if (!options.database) await database.close()
    },
  }
}
