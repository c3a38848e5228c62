import { NotFoundError, zTenantId } from '@credential-service/core-domain'
import {
  ENTITY_STATEMENT_TYPE,
  type ProtocolDeps,
  signEntityConfiguration,
  verifierEntityMetadata,
} from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'

const params = z.object({ tenant: zTenantId })

/** The verifier's entity identifier (OpenID Federation 1.0 §1.2), its `openid_federation` client id's value. */
export const verifierEntityId = (publicUrl: string, tenant: string) => `${publicUrl}/verifiers/${tenant}`

/**
 * The tenant verifier as a federation entity (OpenID Federation 1.0 §9): its entity configuration
 * with `openid_credential_verifier` metadata (OpenID4VP 1.0 §11: its formats and request keys), for
 * wallets resolving an `openid_federation:` client identifier.
 */
export function federationRoutes(
  deps: Pick<ProtocolDeps, 'keys' | 'tenants' | 'publicUrl' | 'now'>,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/verifiers/:tenant/.well-known/openid-federation',
      { schema: { params } },
      async (req, reply) => {
        const { tenant } = req.params
        if (!(await deps.tenants.tenant(tenant))) throw new NotFoundError('verifier', tenant)
        const metadata = await verifierEntityMetadata(deps, tenant)
        const jwt = await signEntityConfiguration(
          deps,
          tenant,
          verifierEntityId(deps.publicUrl, tenant),
          metadata,
        )
        return reply.type(ENTITY_STATEMENT_TYPE).header('cache-control', 'public, max-age=60').send(jwt)
      },
    )
  }
}
