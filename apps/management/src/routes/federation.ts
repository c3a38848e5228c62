import { zFederationMembership, zFederationMembershipInput } from '@credential-service/core-domain'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { createFederationService, type FederationServiceDeps } from '../services/federation-service'
import { tenantSingleton } from './tenant-singleton'

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
  const singleton = tenantSingleton({
    collection: 'federation',
    tenantInPath: mount.tenantInPath,
    roles: ROLES,
    input: zFederationMembershipInput,
    output: zFederationMembership,
    operations: {
      get: { id: 'getFederationMembership', summary: 'The tenant’s OpenID Federation membership' },
      put: {
        id: 'putFederationMembership',
        summary: 'Make the tenant’s issuer and verifier federation entities, or change their membership',
        description:
          'The issuer and verifier then serve their entity configurations (OpenID Federation 1.0 §9) at `<entity id>/.well-known/openid-federation`, signed with the key chain given, which must not sign any credential or presentation configuration (nor may one be saved with it later). Its keys are published in the `jwks` of the entity configurations only, never in the `jwks` of the issuer, the `jwt-vc-issuer` metadata or the DID document (OpenID Federation 1.0 §3). The signed issuer metadata (`Accept: application/jwt`, OpenID4VCI 1.0 §12.2.3) then carries its trust chain in the `trust_chain` JOSE header, and its entity configuration lists the tenant signing keys in the `openid_credential_issuer` metadata `jwks`. The same body is `federation/membership.json` of a configuration import. Trust marks and subordinate statements must be about one of the tenant’s entity identifiers (422 naming the item otherwise).',
      },
      delete: {
        id: 'deleteFederationMembership',
        summary: 'Leave the federation: the entity configurations are no longer served',
      },
    },
  })
  return async (app) => {
    singleton.register(app, (tenantId, principal) => createFederationService(deps, tenantId, principal))
  }
}
