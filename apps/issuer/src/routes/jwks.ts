import { NotFoundError, zTenantId } from '@credential-service/core-domain'
import { federationKeyChainOf, type ProtocolDeps } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { cachedJson, sendCachedJson } from './cached-json'

const params = z.object({ tenant: zTenantId })
// Short enough that a rotated-in key is seen soon; the rotated-out key stays listed through its grace period.
const CACHE = 'public, max-age=60'

/**
 * The tenant's signing keys for wallets and verifiers: `{issuer}/jwks`, and the SD-JWT VC issuer
 * metadata at `/.well-known/jwt-vc-issuer/issuers/{tenant}` (well-known path insertion).
 */
export function jwksRoutes(
  deps: Pick<ProtocolDeps, 'keys' | 'tenants' | 'publicUrl'>,
): FastifyPluginAsyncZod {
  const jwksOf = async (tenant: string) => {
    if (!(await deps.tenants.tenant(tenant))) throw new NotFoundError('issuer', tenant)
    return deps.keys.jwks(tenant, await federationKeyChainOf(deps.tenants, tenant))
  }
  return async (app) => {
    // The key set changes with time (a rotated-out key leaves at the end of its grace period), so
    // its tag is taken per request: a digest of a few hundred bytes, against a body not sent on 304.
    app.get('/issuers/:tenant/jwks', { schema: { params } }, async (req, reply) =>
      sendCachedJson(req, reply, cachedJson(await jwksOf(req.params.tenant)), CACHE),
    )
    app.get('/.well-known/jwt-vc-issuer/issuers/:tenant', { schema: { params } }, async (req, reply) =>
      sendCachedJson(
        req,
        reply,
        cachedJson({
          issuer: `${deps.publicUrl}/issuers/${req.params.tenant}`,
          jwks: await jwksOf(req.params.tenant),
        }),
        CACHE,
      ),
    )
  }
}
