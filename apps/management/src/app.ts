import {
  createManagementTokenIssuer,
  createManagementTokenVerifier,
  createSecretVerifier,
  type ManagementSigningKey,
} from '@credential-service/crypto'
import { type Database, type DatabaseKind, findClientCredentials } from '@credential-service/db-schema'
import {
  createKeyRuntime,
  createTenantCache,
  type KeyRuntime,
  outboundPolicy,
  problemErrorHandler,
  registerRateLimits,
  registerRoleGuard,
  type SecuredRoute,
  scheduleJob,
  type TenantCache,
  tenantBoundVerifier,
} from '@credential-service/server-kit'
import type { FastifyPluginAsync } from 'fastify'
import type { ManagementConfig } from './config'
import { auditRoutes } from './routes/audit'
import { clientRoutes } from './routes/clients'
import { registerConfigRoutes } from './routes/configs'
import { registerDocs } from './routes/docs'
import { healthRoutes } from './routes/health'
import { keyChainRoutes } from './routes/key-chains'
import { oauthRoutes } from './routes/oauth'
import { offerRoutes } from './routes/offers'
import { sessionRoutes } from './routes/sessions'
import { tenantRoutes } from './routes/tenants'
import { type KeyChainServiceDeps, rotateDueKeyChains } from './services/key-chain-service'
import { applySessionRetention } from './services/session-retention'
import { createTenantService } from './services/tenant-service'
import { createTokenService } from './services/token-service'

export interface ManagementDeps {
  config: ManagementConfig
  database: { db: Database; kind: DatabaseKind; ping: () => Promise<boolean> }
  signingKey: ManagementSigningKey
  /** Key access shared with the other apps of the process; built from the config when absent. */
  keys?: KeyRuntime
  /** Tenant settings and configurations shared with the other apps of the process. */
  tenants?: TenantCache
  now?: () => Date
  /**
   * How often the session retention job runs (default 600 s; 0 = never). It drops the claims of
   * unusable offers, and deletes sessions SESSION_RETENTION_DAYS after their expiry.
   */
  sessionRetentionSeconds?: number
  /** Filled with every role-protected route once the app is ready (for the role matrix). */
  securedRoutes?: SecuredRoute[]
}

export { bootstrapRootClient } from './bootstrap'
export type { ManagementConfig } from './config'
export { parseManagementConfig, zManagementEnv } from './config'
export type { ImportReport } from './config-import/import-config'
export { formatImportReport, importConfigDir } from './config-import/import-config'
export { importAtStartup, importDeps } from './config-import/startup'
export { migrateConfigDir } from './config-migrate/migrate-dir'
export { applySessionRetention } from './services/session-retention'
export { upgradeCheck } from './upgrade-check'

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
    const tenants = deps.tenants ?? createTenantCache({ db: database.db })
    const secured = registerRoleGuard(
      app,
      tenantBoundVerifier(createManagementTokenVerifier({ jwks, issuer, now }), tenants),
    )

    if (config.OIDC === undefined) {
      await registerRateLimits(app, { store: config.RATE_LIMIT_STORE, db: database.db })
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
      await app.register(
        oauthRoutes({ exchange, issuer, jwks, failuresPerMinute: config.RATE_LIMIT_TOKEN_PER_MINUTE }),
      )
    }
    await app.register(healthRoutes(database))
    await app.register(tenantRoutes(createTenantService(database.db)))
    await app.register(clientRoutes(database.db, { tenantInPath: true }))
    await app.register(clientRoutes(database.db, { tenantInPath: false }))

    const keyDeps: KeyChainServiceDeps = {
      db: database.db,
      keys: deps.keys ?? createKeyRuntime({ config, db: database.db, now }),
      publicUrl: config.PUBLIC_URL,
      now,
    }
    await app.register(keyChainRoutes(keyDeps, { tenantInPath: true }))
    await app.register(keyChainRoutes(keyDeps, { tenantInPath: false }))
    await registerConfigRoutes(app, {
      db: database.db,
      cipher: keyDeps.keys.cipher,
      outbound: outboundPolicy(config),
    })
    const offerDeps = {
      db: database.db,
      cipher: keyDeps.keys.cipher,
      keys: keyDeps.keys,
      tenants,
      outbound: outboundPolicy(config),
      publicUrl: config.PUBLIC_URL,
      now,
    }
    await app.register(offerRoutes(offerDeps, { tenantInPath: true }))
    await app.register(offerRoutes(offerDeps, { tenantInPath: false }))
    await app.register(sessionRoutes({ db: database.db, now }, { tenantInPath: true }))
    await app.register(sessionRoutes({ db: database.db, now }, { tenantInPath: false }))
    await app.register(auditRoutes(database.db, { tenantInPath: true }))
    await app.register(auditRoutes(database.db, { tenantInPath: false }))
    const retentionEvery = deps.sessionRetentionSeconds ?? 600
    if (retentionEvery > 0) {
      // Every management pod runs it; the batched deletes do not conflict.
      scheduleJob(app, 'session retention job', retentionEvery, async () => {
        const done = await applySessionRetention({
          db: database.db,
          now,
          retentionDays: config.SESSION_RETENTION_DAYS,
        })
        if (done.claimsDropped || done.deleted.issuance || done.deleted.presentation)
          app.log.info(done, 'session retention applied')
      })
    }
    if (config.KEY_ROTATION_CHECK_SECONDS > 0) {
      scheduleJob(app, 'key rotation job', config.KEY_ROTATION_CHECK_SECONDS, async () => {
        const rotated = await rotateDueKeyChains(keyDeps)
        if (rotated.length) app.log.info({ rotated }, 'key chains rotated by policy')
      })
    }

    app.addHook('onReady', async () => {
      deps.securedRoutes?.push(...secured)
    })
  }
}
