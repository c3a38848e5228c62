import { UnauthenticatedError } from '@credential-service/core-domain'
import { createSecretVerifier, type ManagementSigningKey } from '@credential-service/crypto'
import {
  countWebhookBacklog,
  createConsoleSessionRepository,
  type Database,
  type DatabaseKind,
  type DatabaseStats,
  findClientCredentials,
  trustListFacts,
} from '@credential-service/db-schema'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import {
  createKeyRuntime,
  createMetrics,
  createTenantCache,
  createWebhookOutbox,
  type KeyRuntime,
  type Metrics,
  metricsRoute,
  outboundPolicy,
  problemErrorHandler,
  providerTenantVerifier,
  rateLimitStore,
  registerManagementTokens,
  registerRateLimits,
  registerRoleGuard,
  type SecuredRoute,
  scheduleJob,
  scheduleTrustListRefresh,
  type TenantCache,
  tenantBoundVerifier,
  trustListLimits,
  type WebhookOutbox,
  webhookPolicy,
} from '@credential-service/server-kit'
import type { FastifyPluginAsync } from 'fastify'
import type { ManagementConfig } from './config'
import { consoleOidcSessions } from './oidc/console-sessions'
import { createOidcMode, pushRootClient, pushRootClientWhenReady } from './oidc/oidc-mode'
import { auditRoutes } from './routes/audit'
import { clientRoutes } from './routes/clients'
import { registerConfigRoutes } from './routes/configs'
import { consoleRoutes } from './routes/console'
import { registerConsoleSessions, registerOidcConsoleSessions } from './routes/console-session'
import { credentialStatusRoutes } from './routes/credential-status'
import { registerDocs } from './routes/docs'
import { federationRoutes } from './routes/federation'
import { healthRoutes } from './routes/health'
import { keyChainRoutes } from './routes/key-chains'
import { logoRoutes } from './routes/logos'
import { oauthRoutes, providerTokenNotice } from './routes/oauth'
import { offerRoutes } from './routes/offers'
import { registrarRoutes } from './routes/registrar'
import { schemaMetadataRoutes } from './routes/schema-metadata'
import { sessionEventRoutes } from './routes/session-events'
import { sessionRoutes } from './routes/sessions'
import { tenantRoutes } from './routes/tenants'
import { webhookDeliveryRoutes } from './routes/webhook-deliveries'
import { createConsoleSessionService } from './services/console-session-service'
import { type KeyChainServiceDeps, rotateDueKeyChains } from './services/key-chain-service'
import { createLogoService } from './services/logo-service'
import { createSessionEventHub } from './services/session-events'
import { applySessionRetention } from './services/session-retention'
import { createTenantService } from './services/tenant-service'
import { createClientAuthenticator, createTokenService } from './services/token-service'

export interface ManagementDeps {
  config: ManagementConfig
  database: {
    db: Database
    kind: DatabaseKind
    ping: () => Promise<boolean>
    /** LISTEN, for live session streams across processes (absent: they re-read at each heartbeat). */
    listen?: DatabaseHandle['listen']
    /** The client's pool and failed queries, reported at /api/metrics when given. */
    stats?: () => DatabaseStats
  }
  signingKey: ManagementSigningKey
  /** Key access shared with the other apps of the process; built from the config when absent. */
  keys?: KeyRuntime
  /** Tenant settings and configurations shared with the other apps of the process. */
  tenants?: TenantCache
  /**
   * The webhook outbox shared with the other apps of the process. When absent, one is built that
   * only sends what a replay queued (the issuer and verifier processes drain it).
   */
  outbox?: WebhookOutbox
  /**
   * The process's metrics, served at `/api/metrics` (in all-in-one mode shared with the issuer and
   * verifier); a new registry with this app's metrics and the database's when absent.
   */
  metrics?: Metrics
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

    const stats = database.stats
    const metrics =
      deps.metrics ??
      createMetrics({
        tenantLabelLimit: config.METRICS_TENANT_LABEL_LIMIT,
        ...(stats ? { database: { stats } } : {}),
      })
    metrics.observeRequests(app, 'management')
    app.setErrorHandler(problemErrorHandler)
    // The API speaks JSON (and forms at the token endpoint); anything else is a 415, not a string body.
    app.removeContentTypeParser('text/plain')
    // Spec §5.4: with OIDC set, tokens come from the provider and clients are managed there.
    const oidc = createOidcMode(config, deps.now)
    await registerDocs(app, { providerTokenUrl: oidc?.tokenUrl })
    const tenants = deps.tenants ?? createTenantCache({ db: database.db })
    // Unused with OIDC set (the provider's tokens are verified instead), but cheap to register.
    const tokens = await registerManagementTokens(app, {
      key: deps.signingKey,
      issuer,
      lifetimeSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
      ...(deps.now ? { now: deps.now } : {}),
    })
    const secured = registerRoleGuard(
      app,
      oidc
        ? providerTenantVerifier(oidc.verify, tenants, { consoleClientId: config.CONSOLE_OIDC_CLIENT_ID })
        : tenantBoundVerifier(tokens.verify, tenants),
    )

    if (oidc) {
      await app.register(providerTokenNotice(oidc.tokenUrl))
      pushRootClientWhenReady(app, () => pushRootClient(database.db, config, oidc.admin))
      if (config.CONSOLE_OIDC_CLIENT_ID)
        await registerOidcConsoleSessions(app, {
          service: consoleOidcSessions(config, database.db, oidc, config.CONSOLE_OIDC_CLIENT_ID),
          origin: new URL(config.PUBLIC_URL).origin,
          maxSeconds: config.CONSOLE_SESSION_MAX_SECONDS,
        })
    } else {
      await registerRateLimits(app, { store: rateLimitStore(config), db: database.db })
      const clientDeps = {
        findClient: (clientId: string) => findClientCredentials(database.db, clientId),
        verifySecret: createSecretVerifier(),
        issueToken: tokens.issue,
      }
      const exchange = createTokenService(clientDeps)
      await registerConsoleSessions(app, {
        service: createConsoleSessionService({
          ...clientDeps,
          sessions: createConsoleSessionRepository(database.db, {
            idleSeconds: config.CONSOLE_SESSION_IDLE_SECONDS,
          }),
          maxSeconds: config.CONSOLE_SESSION_MAX_SECONDS,
        }),
        authenticate: createClientAuthenticator(clientDeps, (detail) => new UnauthenticatedError(detail)),
        origin: new URL(config.PUBLIC_URL).origin,
        maxSeconds: config.CONSOLE_SESSION_MAX_SECONDS,
        failuresPerMinute: config.RATE_LIMIT_TOKEN_PER_MINUTE,
      })
      await app.register(
        oauthRoutes({ exchange, issuer, jwks, failuresPerMinute: config.RATE_LIMIT_TOKEN_PER_MINUTE }),
      )
    }
    await app.register(healthRoutes(database))
    const consoleSignIn = oidc?.consoleSignIn
    await app.register(
      consoleRoutes({
        dir: config.CONSOLE_DIR,
        // The page calls no provider endpoint: this process exchanges and renews (issue 42).
        ...(oidc && consoleSignIn ? { signIn: consoleSignIn } : {}),
      }),
    )
    await app.register(metricsRoute(metrics))
    await app.register(tenantRoutes(createTenantService(database.db, oidc?.admin)))
    await app.register(logoRoutes(createLogoService({ db: database.db, publicUrl: config.PUBLIC_URL })))
    await app.register(clientRoutes(database.db, { tenantInPath: true }, oidc?.admin))
    await app.register(clientRoutes(database.db, { tenantInPath: false }, oidc?.admin))

    const keyDeps: KeyChainServiceDeps = {
      db: database.db,
      keys:
        deps.keys ??
        createKeyRuntime({ config, db: database.db, now, observeProviderCall: metrics.keyProviderCall }),
      publicUrl: config.PUBLIC_URL,
      now,
    }
    await app.register(keyChainRoutes(keyDeps, { tenantInPath: true }))
    await app.register(keyChainRoutes(keyDeps, { tenantInPath: false }))
    await registerConfigRoutes(app, {
      db: database.db,
      cipher: keyDeps.keys.cipher,
      outbound: outboundPolicy(config),
      keyChains: keyDeps,
    })
    const signingDeps = {
      db: database.db,
      keys: keyDeps.keys,
      cipher: keyDeps.keys.cipher,
      outbound: outboundPolicy(config),
      now,
    }
    await app.register(schemaMetadataRoutes(signingDeps, { tenantInPath: true }))
    await app.register(schemaMetadataRoutes(signingDeps, { tenantInPath: false }))
    const offerDeps = {
      db: database.db,
      cipher: keyDeps.keys.cipher,
      keys: keyDeps.keys,
      tenants,
      outbound: outboundPolicy(config),
      publicUrl: config.PUBLIC_URL,
      metrics,
      now,
    }
    await app.register(offerRoutes(offerDeps, { tenantInPath: true }))
    await app.register(offerRoutes(offerDeps, { tenantInPath: false }))
    const registrarDeps = {
      db: database.db,
      cipher: keyDeps.keys.cipher,
      outbound: outboundPolicy(config),
      publicHost: new URL(config.PUBLIC_URL).hostname,
      now,
    }
    await app.register(registrarRoutes(registrarDeps, { tenantInPath: true }))
    await app.register(registrarRoutes(registrarDeps, { tenantInPath: false }))
    const federationDeps = { db: database.db, publicUrl: config.PUBLIC_URL }
    await app.register(federationRoutes(federationDeps, { tenantInPath: true }))
    await app.register(federationRoutes(federationDeps, { tenantInPath: false }))
    const sessionDeps = { db: database.db, sessionData: keyDeps.keys.sessionData, now }
    await app.register(sessionRoutes(sessionDeps, { tenantInPath: true }))
    await app.register(sessionRoutes(sessionDeps, { tenantInPath: false }))
    const hub = createSessionEventHub({ db: database.db, listen: database.listen, log: app.log })
    app.addHook('onClose', hub.close)
    const eventDeps = { ...sessionDeps, hub, heartbeatSeconds: config.SESSION_EVENTS_HEARTBEAT_SECONDS }
    await app.register(sessionEventRoutes(eventDeps, { tenantInPath: true }))
    await app.register(sessionEventRoutes(eventDeps, { tenantInPath: false }))
    let outbox = deps.outbox
    if (!outbox) {
      outbox = createWebhookOutbox({
        db: database.db,
        cipher: keyDeps.keys.cipher,
        outbound: outboundPolicy(config),
        ...webhookPolicy(config),
        log: app.log,
        metrics,
        now,
      })
      app.addHook('onClose', outbox.close)
    }
    // The backlog is one count over the outbox per scrape; only management reports it.
    metrics.watchWebhookOutbox(() => countWebhookBacklog(database.db))
    const deliveryDeps = { db: database.db, outbox, now }
    await app.register(webhookDeliveryRoutes(deliveryDeps, { tenantInPath: true }))
    await app.register(webhookDeliveryRoutes(deliveryDeps, { tenantInPath: false }))
    const statusDeps = { db: database.db, publicUrl: config.PUBLIC_URL }
    await app.register(credentialStatusRoutes(statusDeps, { tenantInPath: true }))
    await app.register(credentialStatusRoutes(statusDeps, { tenantInPath: false }))
    await app.register(auditRoutes(database.db, { tenantInPath: true }))
    await app.register(auditRoutes(database.db, { tenantInPath: false }))
    const retentionEvery = deps.sessionRetentionSeconds ?? 600
    if (retentionEvery > 0) {
      // Every management pod runs it; the batched deletes do not conflict.
      scheduleJob(app, 'session retention job', retentionEvery, async () => {
        const done = await applySessionRetention({
          db: database.db,
          sessionData: keyDeps.keys.sessionData,
          now,
          retentionDays: config.SESSION_RETENTION_DAYS,
        })
        if (
          done.claimsDropped ||
          done.resultsDropped ||
          done.sealed ||
          done.deleted.issuance ||
          done.deleted.presentation ||
          done.deleted.webhookDeliveries
        )
          app.log.info(done, 'session retention applied')
      })
    }
    // Every process may run it: each due list is claimed by one of them (claimDueTrustLists).
    scheduleTrustListRefresh(app, config.TRUST_LIST_REFRESH_CHECK_SECONDS, {
      db: database.db,
      outbound: outboundPolicy(config),
      trustListLimits: trustListLimits(config),
      metrics,
      now,
    })
    metrics.watchTrustLists(() => trustListFacts(database.db))
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
