import {
  createManagementTokenIssuer,
  createManagementTokenVerifier,
  createSecretVerifier,
  type ManagementSigningKey,
} from '@credential-service/crypto'
import { type Database, type DatabaseKind, findClientCredentials } from '@credential-service/db-schema'
import { problemErrorHandler, registerRoleGuard, type SecuredRoute } from '@credential-service/server-kit'
import type { FastifyPluginAsync } from 'fastify'
import type { ManagementConfig } from './config'
import { clientRoutes } from './routes/clients'
import { registerDocs } from './routes/docs'
import { healthRoutes } from './routes/health'
import { oauthRoutes } from './routes/oauth'
import { tenantRoutes } from './routes/tenants'
import { createTenantService } from './services/tenant-service'
import { createTokenService } from './services/token-service'

export interface ManagementDeps {
  config: ManagementConfig
  database: { db: Database; kind: DatabaseKind; ping: () => Promise<boolean> }
  signingKey: ManagementSigningKey
  now?: () => Date
  /** Filled with every role-protected route once the app is ready (for the role matrix). */
  securedRoutes?: SecuredRoute[]
}

export { bootstrapRootClient } from './bootstrap'
export type { ManagementConfig } from './config'
export { parseManagementConfig, zManagementEnv } from './config'

/** The management API (`/api/**`) as a Fastify plugin (DESIGN.md). */
export function buildManagementApp(deps: ManagementDeps): FastifyPluginAsync {
  return async (app) => {
    const { config, database } = deps
    const issuer = `${config.PUBLIC_URL}/api`
    const jwks = { keys: [deps.signingKey.publicJwk] }
    const now = deps.now ?? (() => new Date())

    app.setErrorHandler(problemErrorHandler)
    // The API speaks JSON (and forms at the token endpoint); anything else is a 415, not a string body.
    app.removeContentTypeParser('text/plain')
    await registerDocs(app, { publicUrl: config.PUBLIC_URL, builtInTokenServer: config.OIDC === undefined })
    const secured = registerRoleGuard(app, createManagementTokenVerifier({ jwks, issuer, now }))

    if (config.OIDC === undefined) {
      const exchange = createTokenService({
        findClient: (clientId) => findClientCredentials(database.db, clientId),
        verifySecret: createSecretVerifier(),
        issueToken: createManagementTokenIssuer({
          key: deps.signingKey,
          issuer,
          lifetimeSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
          now,
        }),
      })
      await app.register(oauthRoutes({ exchange, issuer, jwks }))
    }
    await app.register(healthRoutes(database))
    await app.register(tenantRoutes(createTenantService(database.db)))
    await app.register(clientRoutes(database.db, { tenantInPath: true }))
    await app.register(clientRoutes(database.db, { tenantInPath: false }))

    app.addHook('onReady', async () => {
      deps.securedRoutes?.push(...secured)
    })
  }
}
