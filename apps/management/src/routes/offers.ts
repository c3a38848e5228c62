import {
  zOfferCreate,
  zOfferCreated,
  zPresentationRequestCreate,
  zPresentationRequestCreated,
} from '@credential-service/core-domain'
import { problemResponses, requireTenantScope, tenantMount } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { createOfferService, type OfferServiceDeps } from '../services/offer-service'
import { createPresentationRequestService } from '../services/presentation-request-service'

/** Credential offers and presentation requests, under the tenant and as the token-tenant shorthand. */
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
          summary: 'Create a credential offer (pre-authorized code and/or authorization code grant)',
          description: [
            'Claims come inline per configuration, or from the configuration’s attribute provider; they are validated against the schema derived from its fields. A client with a non-empty `allowedIssuanceConfigs` gets 403 for any other configuration.',
            'A configuration with `userAuthentication` takes its claims from the holder’s login: offer it with grant `authorization_code` (any other grant is a 422 naming `body.grant`) and without claims for it (422 `body.claims.<id>`). A `txCode` needs grant `pre-authorized_code` (422 `body.txCode` otherwise: the authorization code flow would skip it).',
          ].join('\n\n'),
          params: offers.listParams,
          body: zOfferCreate,
          response: { 201: zOfferCreated, ...problemResponses },
        },
      },
      async (req, reply) => {
        const created = await service(req).create(req.body)
        // The flow's first line; the offer and its codes are bearer values and stay out.
        req.log.info(
          {
            tenantId: requireTenantScope(req),
            sessionId: created.sessionId,
            credentialConfigurationIds: req.body.credentialConfigurationIds,
          },
          'offer created',
        )
        return reply.status(201).send(created)
      },
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
  }
}
