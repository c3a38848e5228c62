import { NotFoundError, zTenantId } from '@credential-service/core-domain'
import { allStatusListViews } from '@credential-service/crypto'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { perTenant } from '../services/per-tenant'
import { createStatusListViewService } from '../services/status-list-views'
import { createStatusListService, STATUS_LIST_TTL_SECONDS } from '../services/status-lists'
import { tenantScope } from '../tenant-scope'
import { matchesEtag, negotiateStatusListForm } from './status-list-accept'

/**
 * A signed list in one of its forms: cacheable for the list's `ttl`, with its ETag for conditional
 * requests (304) and CORS open (browser-based verifiers fetch it too).
 */
function sendList(
  req: FastifyRequest,
  reply: FastifyReply,
  type: string,
  found: { token: string | Uint8Array; etag: string; signedAt: Date },
) {
  reply
    .header('cache-control', `public, max-age=${STATUS_LIST_TTL_SECONDS}`)
    .header('etag', found.etag)
    .header('last-modified', found.signedAt.toUTCString())
    .header('access-control-allow-origin', '*')
  if (matchesEtag(req.headers['if-none-match'], found.etag)) return reply.status(304).send()
  return reply.type(type).send(typeof found.token === 'string' ? found.token : Buffer.from(found.token))
}

const params = z.object({ tenant: zTenantId, id: z.string().max(100) })

/**
 * `{issuer}/status-lists/{id}` (draft-ietf-oauth-status-list §8.1, checklist F-32): the signed
 * Status List Token, `application/statuslist+jwt` or, on `Accept`, the same list as
 * `application/statuslist+cwt` (§5.2; what ISO 18013-5 relying parties ask for), cacheable for its
 * `ttl`, with an ETag per form for conditional requests and CORS open (browser-based verifiers
 * fetch it too). An `Accept` that takes neither form is 406.
 */
export function statusListRoutes(deps: ProtocolDeps): FastifyPluginAsyncZod {
  const service = perTenant((tenant) => createStatusListService(tenantScope(deps, tenant)))
  const views = perTenant((tenant) => createStatusListViewService(tenantScope(deps, tenant)))
  const byName = new Map(allStatusListViews().map((view) => [view.name, view]))
  /** `{view}/{variant}` of a list: one of a format's views, in one of its variants (else 400). */
  const viewParams = z.union(
    [...byName.values()].map((view) =>
      params.extend({ view: z.literal(view.name), variant: z.enum(view.variants) }),
    ) as unknown as [z.ZodObject, ...z.ZodObject[]],
  )
  return async (app) => {
    /**
     * `{list URI}/{view}/{variant}`: the list in a form a format's credentials name (its runtime's
     * `statusListViews`: `bitstring/{purpose}`, a W3C BitstringStatusListCredential as
     * `application/vc+jwt`, Bitstring Status List §2.2); cacheable as the token, the same max-age.
     */
    app.get(
      '/issuers/:tenant/status-lists/:id/:view/:variant',
      { schema: { params: viewParams } },
      async (req, reply) => {
        const {
          tenant,
          id,
          view: name,
          variant,
        } = req.params as { tenant: string; id: string; view: string; variant: string }
        const view = byName.get(name)
        const found =
          view && (await deps.tenants.tenant(tenant))
            ? await views(tenant).signedView(id, view, variant)
            : undefined
        if (!view || !found) throw new NotFoundError('status list', id)
        return sendList(req, reply, view.contentType, found)
      },
    )

    app.get('/issuers/:tenant/status-lists/:id', { schema: { params } }, async (req, reply) => {
      const { tenant, id } = req.params
      const form = negotiateStatusListForm(req.headers.accept)
      reply.header('vary', 'Accept')
      if (!form)
        return reply.status(406).send({
          error: 'not_acceptable',
          error_description:
            'the status list is served as application/statuslist+jwt or application/statuslist+cwt',
        })
      const known = Boolean(await deps.tenants.tenant(tenant))
      const found = !known
        ? undefined
        : form === 'application/statuslist+cwt'
          ? await service(tenant).cwt(id)
          : await service(tenant).token(id)
      if (!found) throw new NotFoundError('status list', id)
      return sendList(req, reply, form, found)
    })
  }
}
