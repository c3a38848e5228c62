import type { KeyProviderCall } from '@credential-service/crypto'
import type { DatabaseStats } from '@credential-service/db-schema'
import type { FastifyInstance } from 'fastify'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'

/** Prometheus text exposition format 0.0.4. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
/** Label of a tenant beyond the label limit, or not (yet) known to exist. */
export const OTHER_TENANT = '_other'
/** Label of a request that names no tenant (operator routes, discovery without tenant). */
export const NO_TENANT = '_none'
export const DEFAULT_TENANT_LABEL_LIMIT = 100

export type AppName = 'issuer' | 'verifier' | 'management'

/** Issuance and presentation events the services report (a port: the services know no prom-client). */
export interface FlowMetrics {
  offerCreated(tenantId: string): void
  presentationRequested(tenantId: string): void
  /** `count` credentials of `format` issued in one credential response (a batch counts each). */
  credentialsIssued(tenantId: string, format: string, count: number): void
  presentationFinished(tenantId: string, result: 'verified' | 'failed'): void
  /** A webhook delivery starts; the returned function ends it with its outcome. */
  webhookDelivery(tenantId: string): (outcome: 'delivered' | 'retrying' | 'failed') => void
}

/** Each trust list's tenant, id and when its held content was issued, read on every scrape. */
export type TrustListReader = () => Promise<
  Array<{ tenantId: string; id: string; listIssuedAt: Date | null }>
>

/** Counts of the durable webhook outbox, read on every scrape. */
export type WebhookOutboxReader = () => Promise<{ pending: number; failed: number }>

export interface MetricsOptions {
  /**
   * How many tenants get a label value of their own (METRICS_TENANT_LABEL_LIMIT); the rest, and
   * tenants not yet known to exist, count as `_other`. Default 100.
   */
  tenantLabelLimit?: number
  /** The database client whose pool and failed queries are reported; none when absent. */
  database?: { stats(): DatabaseStats }
  /** prom-client's process metrics (CPU, memory, event loop lag, GC, handles); default true. */
  processMetrics?: boolean
}

export interface Metrics extends FlowMetrics {
  registry: Registry
  /** Counts the requests of one app's routes (an `onResponse` hook in the app's scope). */
  observeRequests(app: FastifyInstance, name: AppName): void
  /** Reports the durable webhook outbox (pending and failed deliveries) from `read` on each scrape. */
  watchWebhookOutbox(read: WebhookOutboxReader): void
  /** A key provider call ended (key-runtime.ts `observeProviderCall`): its duration by provider, operation, outcome. */
  keyProviderCall(call: KeyProviderCall): void
  /** A fetch of a tenant's trust list ended (refresh job). */
  trustListRefreshed(tenantId: string, outcome: 'ok' | 'failed'): void
  /** Reports each fetched trust list's age (now − ListIssueDateTime of the content held) on each scrape. */
  watchTrustLists(read: TrustListReader): void
  /**
   * The exposition text. With `tenantId` (a tenant-bound caller) only that tenant's series:
   * tenants never see each other's ids or traffic, nor the process-wide metrics.
   */
  render(tenantId?: string): Promise<string>
}

const PREFIX = 'credential_service_'
// Seconds: wallet steps are tens of ms; signing with a KMS or a slow database reach seconds.
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx']

/**
 * One registry per process (per composition in all-in-one mode and in tests): nothing is
 * registered globally, so any number of apps can be built in one process.
 */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry()
  const limit = options.tenantLabelLimit ?? DEFAULT_TENANT_LABEL_LIMIT
  const labelled = new Set<string>()
  const registers = [registry]

  /**
   * Bounded cardinality: the first `limit` tenants admitted keep their id as label value. Only a
   * tenant known to exist is admitted, so random ids in wallet URLs cannot use up the slots.
   */
  const tenantLabel = (tenantId: string | null | undefined, exists: boolean): string => {
    if (!tenantId) return NO_TENANT
    if (labelled.has(tenantId)) return tenantId
    if (!exists || labelled.size >= limit) return OTHER_TENANT
    labelled.add(tenantId)
    return tenantId
  }

  const requests = new Counter({
    name: `${PREFIX}http_requests_total`,
    help: 'Requests answered, by app, tenant, route template, method and status class',
    labelNames: ['app', 'tenant', 'route', 'method', 'status_class'] as const,
    registers,
  })
  const errors = new Counter({
    name: `${PREFIX}http_request_errors_total`,
    help: 'Requests answered with a 4xx or 5xx status, by app, tenant, route template, method and status',
    labelNames: ['app', 'tenant', 'route', 'method', 'status'] as const,
    registers,
  })
  const latency = new Histogram({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'Time from receiving a request to sending the answer, by app, tenant, route template and method',
    labelNames: ['app', 'tenant', 'route', 'method'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  })
  const offers = new Counter({
    name: `${PREFIX}credential_offers_created_total`,
    help: 'Credential offers created, by tenant',
    labelNames: ['tenant'] as const,
    registers,
  })
  const issued = new Counter({
    name: `${PREFIX}credentials_issued_total`,
    help: 'Credentials issued, by tenant and format (each credential of a batch counts)',
    labelNames: ['tenant', 'format'] as const,
    registers,
  })
  const presentationRequests = new Counter({
    name: `${PREFIX}presentation_requests_created_total`,
    help: 'Presentation requests created, by tenant',
    labelNames: ['tenant'] as const,
    registers,
  })
  const presentations = new Counter({
    name: `${PREFIX}presentations_total`,
    help: 'Presentation responses that ended a session, by tenant and result (verified, failed)',
    labelNames: ['tenant', 'result'] as const,
    registers,
  })
  const deliveries = new Counter({
    name: `${PREFIX}webhook_deliveries_total`,
    help: 'Webhook delivery attempts, by tenant and outcome (delivered; retrying: failed, another attempt is due; failed: given up)',
    labelNames: ['tenant', 'outcome'] as const,
    registers,
  })
  const deliveriesInFlight = new Gauge({
    name: `${PREFIX}webhook_deliveries_in_flight`,
    help: 'Webhook deliveries of this process under way (attempting or waiting to retry)',
    registers,
  })
  new Gauge({
    name: `${PREFIX}metrics_tenant_labels`,
    help: `Tenants with a label value of their own (at most the limit; the rest count as ${OTHER_TENANT})`,
    registers,
    collect() {
      this.set(labelled.size)
    },
  })
  if (options.database) registerDatabaseMetrics(registry, options.database)
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry })

  let outbox: WebhookOutboxReader | undefined
  const outboxGauge = new Gauge({
    name: `${PREFIX}webhook_outbox_deliveries`,
    help: 'Webhook deliveries in the durable outbox, by state (pending, failed: gave up)',
    labelNames: ['state'] as const,
    registers: [],
    async collect() {
      const counts = await (outbox as WebhookOutboxReader)()
      this.set({ state: 'pending' }, counts.pending)
      this.set({ state: 'failed' }, counts.failed)
    },
  })

  const providerCalls = new Histogram({
    name: `${PREFIX}key_provider_call_duration_seconds`,
    help: 'Key provider calls (Vault, AWS KMS, PKCS#11, Azure Key Vault, Cloud KMS), by provider, operation (sign, describe, generate) and outcome (ok, unavailable, not_found, misconfigured, refused, error)',
    labelNames: ['provider', 'operation', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  })

  const trustListRefreshes = new Counter({
    name: `${PREFIX}trust_list_refreshes_total`,
    help: 'Trust list fetches by the refresh job, by tenant and outcome (ok; failed: the last good content is kept)',
    labelNames: ['tenant', 'outcome'] as const,
    registers,
  })
  let trustLists: TrustListReader | undefined
  const trustListAge = new Gauge({
    name: `${PREFIX}trust_list_age_seconds`,
    help: 'Age of the trust list content held (now minus its ListIssueDateTime), by tenant and list',
    labelNames: ['tenant', 'list'] as const,
    registers: [],
    async collect() {
      this.reset()
      const now = Date.now()
      for (const list of await (trustLists as TrustListReader)()) {
        if (!list.listIssuedAt) continue
        const tenant = tenantLabel(list.tenantId, true)
        if (tenant === OTHER_TENANT) continue
        this.set({ tenant, list: list.id }, (now - list.listIssuedAt.getTime()) / 1000)
      }
    },
  })

  return {
    registry,
    observeRequests(app, name) {
      app.addHook('onResponse', (request, reply, done) => {
        // The route template (`/issuers/:tenant/offers/:id`), never the URL: ids and capabilities
        // stay out of the labels. Unrouted requests (404 from the root) have none and are not counted.
        const route = request.routeOptions.url
        if (route === undefined) return done()
        const status = reply.statusCode
        const params = request.params as { tenant?: string; tenantId?: string } | undefined
        // A tenant is known to exist once it was served (below 400) or an authenticated caller acts on it.
        const scope = request.tenantScope
        const tenant = tenantLabel(
          scope ?? params?.tenant ?? params?.tenantId,
          status < 400 || typeof scope === 'string',
        )
        const method = request.method
        requests.inc({
          app: name,
          tenant,
          route,
          method,
          status_class: STATUS_CLASSES[Math.floor(status / 100) - 1] ?? 'other',
        })
        if (status >= 400) errors.inc({ app: name, tenant, route, method, status: String(status) })
        latency.observe({ app: name, tenant, route, method }, reply.elapsedTime / 1000)
        done()
      })
    },
    offerCreated: (tenantId) => offers.inc({ tenant: tenantLabel(tenantId, true) }),
    presentationRequested: (tenantId) => presentationRequests.inc({ tenant: tenantLabel(tenantId, true) }),
    credentialsIssued: (tenantId, format, count) =>
      issued.inc({ tenant: tenantLabel(tenantId, true), format }, count),
    presentationFinished: (tenantId, result) =>
      presentations.inc({ tenant: tenantLabel(tenantId, true), result }),
    webhookDelivery(tenantId) {
      deliveriesInFlight.inc()
      return (outcome) => {
        deliveriesInFlight.dec()
        deliveries.inc({ tenant: tenantLabel(tenantId, true), outcome })
      }
    },
    watchWebhookOutbox(read) {
      if (!outbox) registry.registerMetric(outboxGauge)
      outbox = read
    },
    keyProviderCall: ({ provider, operation, outcome, seconds }) =>
      providerCalls.observe({ provider, operation, outcome }, seconds),
    trustListRefreshed: (tenantId, outcome) =>
      trustListRefreshes.inc({ tenant: tenantLabel(tenantId, true), outcome }),
    watchTrustLists(read) {
      if (!trustLists) registry.registerMetric(trustListAge)
      trustLists = read
    },
    async render(tenantId) {
      const text = await registry.metrics()
      return tenantId === undefined ? text : onlyTenant(text, tenantId)
    },
  }
}

/**
 * The families with a `tenant` label, with only the samples of `tenantId`. Tenant ids are
 * `[a-z0-9-]` (zTenantId), so the label needs no escaping.
 */
function onlyTenant(text: string, tenantId: string): string {
  const own = `tenant="${tenantId}"`
  const kept: string[] = []
  for (const family of text.split(/\n(?=# HELP )/)) {
    const lines = family.split('\n')
    if (!lines.some((line) => !line.startsWith('#') && line.includes('tenant="'))) continue
    kept.push(lines.filter((line) => line.startsWith('#') || line.includes(own)).join('\n'))
  }
  return kept.length ? `${kept.join('\n').trimEnd()}\n` : ''
}

/** Pool gauges and the failed-query counter, read from the client's counters on each scrape. */
function registerDatabaseMetrics(registry: Registry, database: { stats(): DatabaseStats }): void {
  const registers = [registry]
  const gauge = (name: string, help: string, pick: (stats: DatabaseStats) => number) =>
    new Gauge({
      name: `${PREFIX}${name}`,
      help,
      registers,
      collect() {
        this.set(pick(database.stats()))
      },
    })
  gauge('db_pool_max_connections', 'Connections the database pool may open', (s) => s.maxConnections)
  gauge('db_pool_busy', 'Statements and transactions holding a database connection', (s) => s.busy)
  gauge('db_pool_waiting', 'Statements and transactions waiting for a database connection', (s) => s.waiting)
  let statementsReported = 0
  new Counter({
    name: `${PREFIX}db_statements_total`,
    help: 'Database statements sent (on the embedded database a transaction counts once)',
    registers,
    collect() {
      const { statements } = database.stats()
      if (statements > statementsReported) this.inc(statements - statementsReported)
      statementsReported = statements
    },
  })
  const reported: Record<string, number> = {}
  new Counter({
    name: `${PREFIX}db_query_errors_total`,
    help: 'Failed database queries, by reason (pool_timeout, query_timeout, connection, sqlstate_<class>)',
    labelNames: ['reason'] as const,
    registers,
    collect() {
      // The client counts; the counter catches up with it.
      for (const [reason, count] of Object.entries(database.stats().errors)) {
        const delta = count - (reported[reason] ?? 0)
        if (delta > 0) this.inc({ reason }, delta)
        reported[reason] = count
      }
    },
  })
}
