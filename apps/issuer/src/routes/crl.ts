import { createHash } from 'node:crypto'
import { NotFoundError, zTenantId } from '@credential-service/core-domain'
import { createEmptyCrl, jwkContext } from '@credential-service/crypto'
import { createKeyChainRepository } from '@credential-service/db-schema'
import type { ProtocolDeps } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { JWK } from 'jose'
import { z } from 'zod'

const params = z.object({ tenant: zTenantId, keyChainId: z.string().max(128) })
/** How long a relying party may use a fetched CRL (its `nextUpdate`). */
const CRL_HOURS = 24
/** A signed CRL is served until this long before its `nextUpdate`, then signed again. */
const REFRESH_BEFORE_MS = 3_600_000
/** Longest HTTP caching: a copy cached at the last moment still ends before its `nextUpdate`. */
const MAX_AGE_SECONDS = 3600

/** The internal CA of a key chain: its encrypted private JWK and its certificate. */
interface Root {
  keyChainId: string
  jwk: string
  certificate: string
}

interface SignedCrl {
  der: Buffer
  etag: string
  /** The root it was signed with: a chain whose root changed gets a new CRL. */
  rootCertificate: string
  refreshAt: number
}

/**
 * The CRL distribution point of an internal-CA key chain (ISO 18013-5 B.1, RFC 5280 §5):
 * `{issuer}/crl/{keyChainId}`, a CRL signed by the chain's root. The service never revokes a
 * certificate it issued (a key leaves a chain by rotation), so the list is empty; readers that
 * require a CRL find one. Key chains without an internal CA have no CRL: 404.
 *
 * The route is public, so the root key is not decrypted and used on every request: the signed CRL
 * is kept per key chain in the process until shortly before its `nextUpdate`, and answered with
 * an ETag (304 on If-None-Match) and a max-age that ends before then.
 */
export function crlRoutes(deps: Pick<ProtocolDeps, 'db' | 'keys' | 'now'>): FastifyPluginAsyncZod {
  const signed = new Map<string, Promise<SignedCrl>>()

  async function sign(tenant: string, root: Root): Promise<SignedCrl> {
    const now = deps.now()
    const nextUpdate = new Date(now.getTime() + CRL_HOURS * 3_600_000)
    const der = Buffer.from(
      await createEmptyCrl({
        issuerPrivateJwk: deps.keys.cipher.decrypt<JWK>(root.jwk, jwkContext(tenant, root.keyChainId)),
        issuerCertificate: root.certificate,
        thisUpdate: now,
        nextUpdate,
      }),
    )
    const etag = `"${createHash('sha256').update(der).digest('base64url').slice(0, 27)}"`
    return {
      der,
      etag,
      rootCertificate: root.certificate,
      refreshAt: nextUpdate.getTime() - REFRESH_BEFORE_MS,
    }
  }

  /** The chain's CRL: the kept one while it is fresh, else one signed now (concurrent requests share it). */
  async function crlOf(tenant: string, root: Root): Promise<SignedCrl> {
    const key = `${tenant}/${root.keyChainId}`
    const kept = signed.get(key)
    const crl = await kept?.catch(() => undefined)
    if (crl && crl.rootCertificate === root.certificate && deps.now().getTime() < crl.refreshAt) return crl
    // Another request may have started the next signing meanwhile.
    const current = signed.get(key)
    if (current && current !== kept) return current
    const signing = sign(tenant, root)
    signed.set(key, signing)
    signing.catch(() => signed.delete(key))
    return signing
  }

  return async (app) => {
    app.get('/issuers/:tenant/crl/:keyChainId', { schema: { params } }, async (req, reply) => {
      const { tenant, keyChainId } = req.params
      const row = await createKeyChainRepository(deps.db, tenant).get(keyChainId)
      if (!row?.rootJwk || !row.rootCertificate) throw new NotFoundError('CRL')
      const crl = await crlOf(tenant, { keyChainId, jwk: row.rootJwk, certificate: row.rootCertificate })
      const maxAge = Math.min(MAX_AGE_SECONDS, Math.floor((crl.refreshAt - deps.now().getTime()) / 1000))
      reply.header('cache-control', `public, max-age=${Math.max(0, maxAge)}`).header('etag', crl.etag)
      if (req.headers['if-none-match'] === crl.etag) return reply.status(304).send()
      return reply.type('application/pkix-crl').send(crl.der)
    })
  }
}
