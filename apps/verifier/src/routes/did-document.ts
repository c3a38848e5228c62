import { NotFoundError, verifierDid, zTenantId } from '@credential-service/core-domain'
import { federationKeyChainOf, type ProtocolDeps } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'

const params = z.object({ tenant: zTenantId })

/**
 * The tenant verifier's DID document (did:web, for the `decentralized_identifier` client identifier
 * prefix, OpenID4VP 1.0 §5.9.3): one JsonWebKey2020 verification method per published key of the
 * tenant's key chains (active, and rotated out within their grace), `#<kid>` as the request
 * objects' `kid` names it. Cached as briefly as the JWKS, so a rotated-in key is seen soon.
 */
export function didDocumentRoutes(
  deps: Pick<ProtocolDeps, 'keys' | 'tenants' | 'publicUrl'>,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/verifiers/:tenant/did.json', { schema: { params } }, async (req, reply) => {
      const { tenant } = req.params
      if (!(await deps.tenants.tenant(tenant))) throw new NotFoundError('verifier', tenant)
      const did = verifierDid(deps.publicUrl, tenant)
      const methods = (
        await deps.keys.jwks(tenant, await federationKeyChainOf(deps.tenants, tenant))
      ).keys.map(({ x5c: _x5c, ...publicKeyJwk }) => ({
        id: `${did}#${publicKeyJwk.kid}`,
        type: 'JsonWebKey2020',
        controller: did,
        publicKeyJwk,
      }))
      return reply
        .type('application/did+json')
        .header('cache-control', 'public, max-age=60')
        .send({
          '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/suites/jws-2020/v1'],
          id: did,
          verificationMethod: methods,
          authentication: methods.map((method) => method.id),
          assertionMethod: methods.map((method) => method.id),
        })
    })
  }
}
