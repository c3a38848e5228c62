import { zMetricsText } from '@credential-service/core-domain'
import { deriveManagementSigningKey } from '@credential-service/crypto'
import type { Database } from '@credential-service/db-schema'
import type { FastifyPluginAsync } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { z } from 'zod'
import { registerRoleGuard, tenantBoundVerifier } from './auth'
import type { zCommonEnv } from './env'
import { problemErrorHandler } from './error-handlers'
import { registerManagementTokens } from './management-token'
import { METRICS_CONTENT_TYPE, type Metrics } from './metrics'
import { problemResponses } from './openapi'
import { createTenantCache, type TenantCache } from './tenant-cache'

/**
 * `GET /api/metrics` (spec §5 role `metrics:read`): this process's metrics. Needs a role guard in
 * the scope it is registered in.
 */
export function metricsRoute(metrics: Pick<Metrics, 'render'>): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/metrics',
      {
        config: { roles: ['metrics:read'] },
        schema: {
          operationId: 'getMetrics',
          tags: ['metrics'],
          summary: 'Prometheus metrics of the process that answers',
          description:
            'Requests, latency and errors per tenant and route, issuance and presentation counters, database pool and webhook deliveries (docs/metrics.md). Each process of a scaled deployment answers for itself: scrape every pod. A client bound to a tenant gets only the series of its tenant; an operator client (no tenant) gets all.',
          response: {
            200: {
              description: 'Prometheus text format',
              content: { 'text/plain': { schema: zMetricsText } },
            },
            ...problemResponses,
          },
        },
      },
      // A tenant-bound client sees its own tenant only; an operator client sees the process.
      async (request, reply) =>
        reply.type(METRICS_CONTENT_TYPE).send(await metrics.render(request.principal.tenantId)),
    )
  }
}

export interface MetricsEndpointOptions {
  config: Readonly<z.output<typeof zCommonEnv>>
  database: { db: Database }
  metrics: Pick<Metrics, 'render'>
  tenants?: TenantCache
  now?: () => Date
}

/**
 * `GET /api/metrics` on a standalone issuer or verifier, with management tokens checked as the
 * management app does (key derived from MASTER_SECRET). The ingress sends `/api` to management,
 * so this answers only Prometheus scraping the pod itself.
 */
export function metricsEndpoint(options: MetricsEndpointOptions): FastifyPluginAsync {
  return async (app) => {
    app.setErrorHandler(problemErrorHandler)
    const { config } = options
    const { verify } = await registerManagementTokens(app, {
      key: await deriveManagementSigningKey(config.MASTER_SECRET),
      issuer: `${config.PUBLIC_URL}/api`,
      ...(options.now ? { now: options.now } : {}),
    })
    registerRoleGuard(
      app,
      tenantBoundVerifier(verify, options.tenants ?? createTenantCache({ db: options.database.db })),
    )
    await app.register(metricsRoute(options.metrics))
  }
}
