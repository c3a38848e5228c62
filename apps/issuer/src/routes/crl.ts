import { NotFoundError, zTenantId } from '@credential-service/core-domain'
import { createEmptyCrl, jwkContext } from '@credential-service/crypto'
import { createKeyChainRepository } from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { JWK } from 'jose'
import { z } from 'zod'

const params = z.object({ tenant: zTenantId, keyChainId: z.string().max(128) })
/** How long a relying party may use a fetched CRL (its `nextUpdate`), and may cache the answer. */
const CRL_HOURS = 24
const CACHE = 'public, max-age=3600'

/**
 * The CRL distribution point of an internal-CA key chain (ISO 18013-5 B.1, RFC 5280 §5):
 * `{issuer}/crl/{keyChainId}`, a CRL signed by the chain's root. The service never revokes a
 * certificate it issued (a key leaves a chain by rotation), so the list is empty; readers that
 * require a CRL find one. Key chains without an internal CA have no CRL: 404.
 */
export function crlRoutes(deps: Pick<ProtocolDeps, 'db' | 'keys' | 'now'>): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/issuers/:tenant/crl/:keyChainId', { schema: { params } }, async (req, reply) => {
      const { tenant, keyChainId } = req.params
      const row = await createKeyChainRepository(deps.db, tenant).get(keyChainId)
      if (!row?.rootJwk || !row.rootCertificate) throw new NotFoundError('CRL')
      const now = deps.now()
      const crl = await createEmptyCrl({
        issuerPrivateJwk: deps.keys.cipher.decrypt<JWK>(row.rootJwk, jwkContext(tenant, keyChainId)),
        issuerCertificate: row.rootCertificate,
        thisUpdate: now,
        nextUpdate: new Date(now.getTime() + CRL_HOURS * 3_600_000),
      })
      return reply.header('cache-control', CACHE).type('application/pkix-crl').send(Buffer.from(crl))
    })
  }
}
