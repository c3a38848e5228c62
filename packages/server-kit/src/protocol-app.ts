import type { Database } from '@credential-service/db-schema'
import type { FastifyInstance } from 'fastify'
import type { z } from 'zod'
import type { zCommonEnv } from './env'
import { createKeyRuntime, type KeyRuntime } from './key-runtime'
import type { FlowMetrics } from './metrics'
import { createMetrics, type Metrics } from './metrics'
import type { OutboundPolicy } from './outbound-fetch'
import { backgroundWork, outboundPolicy, webhookPolicy } from './runtime-policies'
import { createTenantCache, type TenantCache } from './tenant-cache'
import type { OutboundLog } from './webhook-delivery'

/** What a wallet-facing app (issuer, verifier) is built from. */
export interface ProtocolAppOptions {
  config: Readonly<z.output<typeof zCommonEnv>>
  database: { db: Database }
  /** Key access shared with the other apps of the process; built from the config when absent. */
  keys?: KeyRuntime
  /** Tenant settings and configurations shared with the other apps of the process. */
  tenants?: TenantCache
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
  webhook: { attempts: number; backoffMs: number; log: OutboundLog; metrics: FlowMetrics }
  metrics: Metrics
  /** The process logger, for failures of background and outbound work that no request reports. */
  log: OutboundLog
  /** Background work (webhook deliveries) to await before the process closes. */
  background: Set<Promise<unknown>>
}

export function protocolDeps(app: FastifyInstance, options: ProtocolAppOptions): ProtocolDeps {
  const { config, database } = options
  const metrics = options.metrics ?? createMetrics({ tenantLabelLimit: config.METRICS_TENANT_LABEL_LIMIT })
  return {
    db: database.db,
    keys: options.keys ?? createKeyRuntime({ config, db: database.db }),
    tenants: options.tenants ?? createTenantCache({ db: database.db }),
    publicUrl: config.PUBLIC_URL,
    now: options.now ?? (() => new Date()),
    outbound: outboundPolicy(config),
    webhook: { ...webhookPolicy(config), log: app.log, metrics },
    metrics,
    log: app.log,
    background: backgroundWork(app),
  }
}
