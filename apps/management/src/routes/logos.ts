import { zLogo, zLogoUpload, zTenantId } from '@credential-service/core-domain'
import { problemResponses } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { createLogoService } from '../services/logo-service'

/** Issue 42 item 5: a logo uploaded for the tenant's issuer display. */
export function logoRoutes(logos: ReturnType<typeof createLogoService>): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/api/tenants/:tenantId/logos',
      {
        config: { roles: ['tenant:manage', 'tenant:admin'] },
        schema: {
          operationId: 'uploadLogo',
          tags: ['tenants'],
          summary: 'Upload a logo for the issuer display',
          description:
            'PNG, JPEG, WebP or SVG, at most 256 KiB, checked against its type. Answers the URL the issuer serves it at (content-addressed, cached for good by wallets), to set as `issuerDisplay[].logo.uri`. The same image again answers the same URL.',
          params: z.object({ tenantId: zTenantId }),
          body: zLogoUpload,
          response: { 201: zLogo, ...problemResponses },
        },
      },
      async (req, reply) => reply.code(201).send(await logos.upload(req.tenantScope as string, req.body)),
    )
  }
}
