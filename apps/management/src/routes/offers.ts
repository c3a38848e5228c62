import {
  NotFoundError,
  zIssuanceSession,
  zIssuanceStatus,
  zOfferCreate,
  zOfferCreated,
  zPage,
  zPageQuery,
  zPresentationRequestCreate,
  zPresentationRequestCreated,
  zSession,
} from '@credential-service/core-domain'
import { problemResponses, requireTenantScope, tenantMount } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { createOfferService, type OfferServiceDeps } from '../services/offer-service'
import { createPresentationRequestService } from '../services/presentation-request-service'

/** Credential offers and sessions, under the tenant and as the token-tenant shorthand. */
export function offerRoutes(deps: OfferServiceDeps, mount: { tenantInPath: boolean }): FastifyPluginAsyncZod {
  const offers = tenantMount({
    collection: 'offers',
    tenantInPath: mount.tenantInPath,
    itemKey: 'sessionId',
    itemSchema: z.string().max(100),
  })
  const requests = tenantMount({
    collection: 'presentation-requests',
    tenantInPath: mount.tenantInPath,
    itemKey: 'id',
    itemSchema: z.string().max(100),
  })
  const sessions = tenantMount({
    collection: 'sessions',
    tenantInPath: mount.tenantInPath,
    itemKey: 'id',
    itemSchema: z.string().max(100),
  })

  return async (app) => {
    const service = (req: Parameters<typeof requireTenantScope>[0]) =>
      createOfferService(deps, requireTenantScope(req), req.principal)

    app.post(
      offers.base,
      {
        config: { roles: ['issuance:offer'] },
        schema: {
          operationId: offers.op('createOffer'),
          tags: ['offers'],
          summary: 'Create a credential offer (pre-authorized code grant)',
          description:
            'Claims come inline per configuration, or from the configuration’s attribute provider; they are validated against the schema derived from its fields. A client with a non-empty `allowedIssuanceConfigs` gets 403 for any other configuration.',
          params: offers.listParams,
          body: zOfferCreate,
          response: { 201: zOfferCreated, ...problemResponses },
        },
      },
      async (req, reply) => reply.status(201).send(await service(req).create(req.body)),
    )

    app.post(
      requests.base,
      {
        config: { roles: ['presentation:request'] },
        schema: {
          operationId: requests.op('createPresentationRequest'),
          tags: ['presentation-requests'],
          summary: 'Create an OpenID4VP presentation request',
          description:
            'Answers the `openid4vp://` URI (client_id + request_uri, request_uri_method=post) for a QR code (cross-device) or a link (same-device, with redirectUri). A client with a non-empty `allowedPresentationConfigs` gets 403 for any other configuration.',
          params: requests.listParams,
          body: zPresentationRequestCreate,
          response: { 201: zPresentationRequestCreated, ...problemResponses },
        },
      },
      async (req, reply) =>
        reply
          .status(201)
          .send(
            await createPresentationRequestService(deps, requireTenantScope(req), req.principal).create(
              req.body,
            ),
          ),
    )

    app.get(
      sessions.base,
      {
        config: { roles: ['issuance:offer', 'presentation:request'] },
        schema: {
          operationId: sessions.op('listSessions'),
          tags: ['sessions'],
          summary: 'List sessions, optionally by status',
          params: sessions.listParams,
          querystring: zPageQuery.extend({ status: zIssuanceStatus.exclude(['expired']).optional() }),
          response: { 200: zPage(zIssuanceSession), ...problemResponses },
        },
      },
      (req) => service(req).list(req.query),
    )

    app.get(
      sessions.item,
      {
        config: { roles: ['issuance:offer', 'presentation:request'] },
        schema: {
          operationId: sessions.op('getSession'),
          tags: ['sessions'],
          summary:
            'Get a session: status, timestamps, configuration ids, failure reason (never secrets or claims)',
          params: sessions.itemParams,
          response: { 200: zSession, ...problemResponses },
        },
      },
      async (req) => {
        const id = (req.params as { id: string }).id
        // Session ids are unique across kinds: an issuance session, else a presentation session.
        try {
          return await service(req).get(id)
        } catch (error) {
          if (!(error instanceof NotFoundError)) throw error
          return createPresentationRequestService(deps, requireTenantScope(req), req.principal).get(id)
        }
      },
    )
  }
}
