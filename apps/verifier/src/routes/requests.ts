import { ProtocolError, zTenantId } from '@credential-service/core-domain'
import { type WalletLimits, walletLimit } from '@credential-service/server-kit'
import formbody from '@fastify/formbody'
import type { onRequestHookHandler } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { handleDcApiResponse } from '../services/dc-api-response'
import { requestObject, type VerifierDeps } from '../services/request-object'
import { handleResponse } from '../services/response'

const params = z.object({ tenant: zTenantId, requestId: z.string().max(100) })
const JAR = 'application/oauth-authz-req+jwt'

/** Request objects by reference (OpenID4VP §5.10): GET, or POST with wallet_metadata / wallet_nonce. */
export function requestRoutes(deps: VerifierDeps, limits: WalletLimits): FastifyPluginAsyncZod {
  return async (app) => {
    await app.register(formbody)
    app.post(
      '/verifiers/:tenant/responses/:requestId',
      // Before the body is read: floods of made-up responses cost no parsing. The body is any form:
      // its schema (zAuthorizationResponse, or the direct_post.jwt envelope) depends on the request,
      // so services/response.ts parses it once the session is found, and fails the session if it
      // is malformed.
      {
        schema: { params, body: z.record(z.string(), z.unknown()) },
        onRequest: walletLimit(app, limits, 'response'),
      },
      async (req, reply) => {
        // OpenID4VP §8.2 (V-20): the response is a form post.
        if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
          throw new ProtocolError('invalid_request', 'the response must be application/x-www-form-urlencoded')
        }
        return reply
          .header('cache-control', 'no-store')
          .send(await handleResponse(deps, req.params.tenant, req.params.requestId, req.body))
      },
    )
    // The page of a dc-api request posts the browser's answer here from its own origin. Any origin
    // may (like direct_post, the endpoint is public and bound to the request by its id; the answer
    // itself is bound to the page's origin), without credentials; errors carry the header too.
    const dcApiCors: onRequestHookHandler = (_req, reply, done) => {
      reply.header('access-control-allow-origin', '*')
      done()
    }
    app.options('/verifiers/:tenant/dc-api/:requestId', { onRequest: dcApiCors }, (_req, reply) =>
      reply
        .header('access-control-allow-methods', 'POST')
        .header('access-control-allow-headers', 'content-type')
        .header('access-control-max-age', '600')
        .status(204)
        .send(),
    )
    app.post(
      '/verifiers/:tenant/dc-api/:requestId',
      {
        schema: {
          params,
          body: z.object({ protocol: z.string().max(200), data: z.record(z.string(), z.unknown()) }),
        },
        onRequest: [dcApiCors, walletLimit(app, limits, 'response')],
      },
      async (req, reply) =>
        reply
          .header('cache-control', 'no-store')
          .send(await handleDcApiResponse(deps, req.params.tenant, req.params.requestId, req.body)),
    )
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
