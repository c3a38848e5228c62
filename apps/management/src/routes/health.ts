import { DATABASE_RETRY_AFTER_SECONDS, zHealth } from '@credential-service/core-domain'
import type { DatabaseKind } from '@credential-service/db-schema'
import { SERVICE_VERSION } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'

export function healthRoutes(database: {
  kind: DatabaseKind
  ping: () => Promise<boolean>
}): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/health',
      {
        schema: {
          operationId: 'getHealth',
          tags: ['health'],
          summary: 'Service status, version and database reachability (no authentication)',
          response: { 200: zHealth, 503: zHealth },
        },
      },
      async (_req, reply) => {
        // ping() gives up after 0.8 s, so a database that does not answer is reported, not waited for.
        const up = await database.ping()
        if (!up) reply.header('retry-after', DATABASE_RETRY_AFTER_SECONDS)
        return reply.status(up ? 200 : 503).send({
          status: up ? 'ok' : 'degraded',
          version: SERVICE_VERSION,
          database: { status: up ? 'up' : 'down', kind: database.kind },
        })
      },
    )
  }
}
