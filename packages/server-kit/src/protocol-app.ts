import type { Database } from '@credential-service/db-schema'
import type { FastifyInstance } from 'fastify'
import type { z } from 'zod'
import type { zCommonEnv } from './env'
import { createKeyRuntime, type KeyRuntime } from './key-runtime'
import { createMetrics, type Metrics } from './metrics'
import type { OutboundPolicy } from './outbound-fetch'
import { outboundPolicy, webhookPolicy } from './runtime-policies'
import { createTenantCache, type TenantCache } from './tenant-cache'
import type { OutboundLog } from './webhook-delivery'
import { createWebhookOutbox, type WebhookOutbox } from './webhook-outbox'

/** What a wallet-facing app (issuer, verifier) is built from. */
export interface ProtocolAppOptions {
  config: Readonly<z.output<typeof zCommonEnv>>
  database: { db: Database }
  /** Key access shared with the other apps of the process; built from the config when absent. */
  keys?: KeyRuntime
  /** Tenant settings and configurations shared with the other apps of the process. */
  tenants?: TenantCache
  /** The webhook outbox shared with the other apps of the process (drained once); built when absent. */
  outbox?: WebhookOutbox
  /** The process's metrics (one registry shared by the apps of the process); a new one when absent. */
  metrics?: Metrics
  now?: () => Date
}

/** What the issuer's and the verifier's protocol services use. */
export interface ProtocolDeps {
  db: Database
  keys: KeyRuntime
  tenants: TenantCache
  publicUrl: string
  now: () => Date
  outbound: OutboundPolicy
  /** Where webhook events are stored, in the transaction of their change, and drained from. */
  outbox: WebhookOutbox
  metrics: Metrics
  /** The process logger, for failures of background and outbound work that no request reports. */
  log: OutboundLog
}

export function protocolDeps(app: FastifyInstance, options: ProtocolAppOptions): ProtocolDeps {
  const { config, database } = options
  const metrics = options.metrics ?? createMetrics({ tenantLabelLimit: config.METRICS_TENANT_LABEL_LIMIT })
  const keys =
    options.keys ??
    createKeyRuntime({ config, db: database.db, observeProviderCall: metrics.keyProviderCall })
  const now = options.now ?? (() => new Date())
  const outbound = outboundPolicy(config)
  const outbox =
    options.outbox ??
    createWebhookOutbox({
      db: database.db,
      cipher: keys.cipher,
      outbound,
      ...webhookPolicy(config),
      metrics,
      now,
    })
  // Issuer and verifier processes drain the outbox; a shared outbox drains once per process.
  outbox.runIn(app)
  return {
    db: database.db,
    keys,
    tenants: options.tenants ?? createTenantCache({ db: database.db }),
    publicUrl: config.PUBLIC_URL,
    now,
    outbound,
    outbox,
    metrics,
    log: app.log,
  }
}
