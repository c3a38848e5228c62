import { zTenantId } from '@credential-service/core-domain'
import formbody from '@fastify/formbody'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { requestObject, type VerifierDeps } from '../services/request-object'

const params = z.object({ tenant: zTenantId, requestId: z.string().max(100) })
const JAR = 'application/oauth-authz-req+jwt'

/** Request objects by reference (OpenID4VP §5.10): GET, or POST with wallet_metadata / wallet_nonce. */
export function requestRoutes(deps: VerifierDeps): FastifyPluginAsyncZod {
  return async (app) => {
    await app.register(formbody)
    app.get('/verifiers/:tenant/requests/:requestId', { schema: { params } }, async (req, reply) =>
      reply
        .type(JAR)
        .header('cache-control', 'no-store')
        .send(await requestObject(deps, req.params.tenant, req.params.requestId)),
    )
    app.post(
      '/verifiers/:tenant/requests/:requestId',
      {
        schema: {
          params,
          body: z
            .object({ wallet_metadata: z.string().optional(), wallet_nonce: z.string().max(500).optional() })
            .loose()
            .optional(),
        },
      },
      async (req, reply) =>
        reply
          .type(JAR)
          .header('cache-control', 'no-store')
          .send(await requestObject(deps, req.params.tenant, req.params.requestId, req.body?.wallet_nonce)),
    )
  }
}
