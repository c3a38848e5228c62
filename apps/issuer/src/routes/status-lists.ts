import { NotFoundError, zTenantId } from '@credential-service/core-domain'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { perTenant } from '../services/per-tenant'
import { createStatusListService, STATUS_LIST_TTL_SECONDS } from '../services/status-lists'
import { tenantScope } from '../tenant-scope'

const params = z.object({ tenant: zTenantId, id: z.string().max(100) })

/**
 * `{issuer}/status-lists/{id}` (draft-ietf-oauth-status-list §8.1, checklist F-32): the signed
 * Status List Token, `application/statuslist+jwt`, cacheable for its `ttl`, with an ETag for
 * conditional requests and CORS open (browser-based verifiers fetch it too).
 */
export function statusListRoutes(deps: ProtocolDeps): FastifyPluginAsyncZod {
  const service = perTenant((tenant) => createStatusListService(tenantScope(deps, tenant)))
  return async (app) => {
    app.get('/issuers/:tenant/status-lists/:id', { schema: { params } }, async (req, reply) => {
      const { tenant, id } = req.params
      const found = (await deps.tenants.tenant(tenant)) ? await service(tenant).token(id) : undefined
      if (!found) throw new NotFoundError('status list', id)
      reply
        .header('cache-control', `public, max-age=${STATUS_LIST_TTL_SECONDS}`)
        .header('etag', found.etag)
        .header('last-modified', found.signedAt.toUTCString())
        .header('access-control-allow-origin', '*')
      const ifNoneMatch = req.headers['if-none-match']
      if (ifNoneMatch?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === found.etag))
        return reply.status(304).send()
      return reply.type('application/statuslist+jwt').send(found.token)
    })
  }
}
