import { NotFoundError, zTenantId } from '@credential-service/core-domain'
import { createTenantLogoRepository } from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'

const params = z.object({ tenant: zTenantId, sha256: z.string().regex(/^[0-9a-f]{64}$/) })

/**
 * Issue 42 item 5: a tenant's uploaded logo at `{issuer}/logos/{sha256}`, the URL its issuer
 * display names. Content-addressed, so cached for good; an SVG is an image, never a page: the
 * policy runs no script of it and `nosniff` keeps the type.
 */
export function logoRoutes(deps: Pick<ProtocolDeps, 'db'>): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/issuers/:tenant/logos/:sha256', { schema: { params } }, async (req, reply) => {
      const { tenant, sha256 } = req.params
      const etag = `"${sha256}"`
      if (req.headers['if-none-match'] === etag)
        return reply
          .status(304)
          .header('etag', etag)
          .header('cache-control', 'public, max-age=31536000, immutable')
          .send()
      const logo = await createTenantLogoRepository(deps.db, tenant).get(sha256)
      if (!logo) throw new NotFoundError('logo', sha256)
      return reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('etag', etag)
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
        .header('cross-origin-resource-policy', 'cross-origin')
        .type(logo.contentType)
        .send(logo.bytes)
    })
  }
}
