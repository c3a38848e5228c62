import { zFederationMembership, zFederationMembershipInput } from '@credential-service/core-domain'
import { problemResponses, requireTenantScope, tenantMount } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { createFederationService, type FederationServiceDeps } from '../services/federation-service'

// Membership of a trust framework, like the registrar's (docs/federation.md).
const ROLES = ['registrar:manage'] as const

/**
 * The tenant's OpenID Federation membership under `/api/tenants/{tenantId}/federation` and the
 * token-tenant shorthand `/api/federation` (docs/federation.md).
 */
export function federationRoutes(
  deps: FederationServiceDeps,
  mount: { tenantInPath: boolean },
): FastifyPluginAsyncZod {
  const {
    base,
    op,
    listParams: params,
  } = tenantMount({
    collection: 'federation',
    tenantInPath: mount.tenantInPath,
    itemKey: 'unused',
    itemSchema: z.string(),
  })
  const tags = ['federation']
  const config = { roles: ROLES }

  return async (app) => {
    const service = (req: Parameters<typeof requireTenantScope>[0]) =>
      createFederationService(deps, requireTenantScope(req), req.principal)

    app.get(
      base,
      {
        config,
        schema: {
          operationId: op('getFederationMembership'),
          tags,
          summary: 'The tenant’s OpenID Federation membership',
          params,
          response: { 200: zFederationMembership, ...problemResponses },
        },
      },
      (req) => service(req).get(),
    )

    app.put(
      base,
      {
        config,
        schema: {
          operationId: op('putFederationMembership'),
          tags,
          summary: 'Make the tenant’s issuer and verifier federation entities, or change their membership',
          description:
            'The issuer and verifier then serve their entity configurations (OpenID Federation 1.0 §9) at `<entity id>/.well-known/openid-federation`, signed with the key chain given, which must not sign any credential or presentation configuration. Trust marks and subordinate statements must be about one of the tenant’s entity identifiers (422 naming the item otherwise).',
          params,
          body: zFederationMembershipInput,
          response: { 200: zFederationMembership, ...problemResponses },
        },
      },
      (req) => service(req).put(req.body),
    )

    app.delete(
      base,
      {
        config,
        schema: {
          operationId: op('deleteFederationMembership'),
          tags,
          summary: 'Leave the federation: the entity configurations are no longer served',
          params,
          response: { 204: z.null().describe('Deleted'), ...problemResponses },
        },
      },
      async (req, reply) => {
        await service(req).delete()
        return reply.status(204).send(null)
      },
    )
  }
}
