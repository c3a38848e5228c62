import { deriveManagementSigningKey } from '@credential-service/crypto'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { buildIssuerApp } from '@credential-service/issuer'
import {
  bootstrapRootClient,
  buildManagementApp,
  importAtStartup,
  type ManagementConfig,
} from '@credential-service/management'
import {
  createKeyRuntime,
  createMetrics,
  createTenantCache,
  createWebhookOutbox,
  outboundPolicy,
  webhookPolicy,
} from '@credential-service/server-kit'
import { buildVerifierApp } from '@credential-service/verifier'
import type { FastifyPluginAsync } from 'fastify'

/** The three apps for one origin, as the ingress would route them (DESIGN.md). */
export async function composeApps(
  config: ManagementConfig,
  database: DatabaseHandle,
  env: Record<string, string | undefined> = {},
  /** The clock of every app (tests move it); real time when absent. */
  now?: () => Date,
): Promise<FastifyPluginAsync[]> {
  await bootstrapRootClient(database.db, config)
  const signingKey = await deriveManagementSigningKey(config.MASTER_SECRET)
  // One registry for the process: /api/metrics shows the three apps and the one database client.
  const metrics = createMetrics({ tenantLabelLimit: config.METRICS_TENANT_LABEL_LIMIT, database })
  // One key runtime for the process: one cache of imported keys, one set of provider clients.
  const keys = createKeyRuntime({
    config,
    db: database.db,
    observeProviderCall: metrics.keyProviderCall,
    ...(now ? { now } : {}),
  })
  const tenants = createTenantCache({ db: database.db })
  // One outbox: the process drains it once, and a replay through /api is sent at once.
  const outbox = createWebhookOutbox({
    db: database.db,
    cipher: keys.cipher,
    outbound: outboundPolicy(config),
    ...webhookPolicy(config),
    metrics,
    now: now ?? (() => new Date()),
  })
  await importAtStartup(config, database.db, keys, env)
  const shared = { config, database, keys, tenants, outbox, metrics, ...(now ? { now } : {}) }
  return [buildManagementApp({ ...shared, signingKey }), buildIssuerApp(shared), buildVerifierApp(shared)]
}
