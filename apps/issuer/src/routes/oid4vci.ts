import {
  NotFoundError,
  parseAccessTokenRequest,
  parseNotificationRequest,
  RuleViolationError,
} from '@credential-service/core-domain'
import type { TrustChainResult } from '@credential-service/crypto'
import {
  ENTITY_STATEMENT_TYPE,
  ownTrustChain,
  signEntityConfiguration,
  type WalletLimits,
  walletLimit,
} from '@credential-service/server-kit'
import formbody from '@fastify/formbody'
import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { decodeProtectedHeader } from 'jose'
import { z } from 'zod'
import { createGrantScope } from '../grants/grant-context'
import { exchangeToken } from '../grants/registry'
import { authenticateWalletClient } from '../services/client-attestation'
import { createCredentialEncryption } from '../services/credential-encryption'
import { verifyDpop } from '../services/dpop'
import { createIssuanceService, type IssuanceDeps } from '../services/issuance'
import { issuerEntityMetadata } from '../services/issuer-entity'
import { authorizationServerMetadata, issuerMetadata } from '../services/metadata'
import { perTenant } from '../services/per-tenant'
import { signedIssuerMetadata } from '../services/signed-metadata'
import { perTenantScope } from '../tenant-scope'
import { authorizationRoutes } from './authorization'
import { type CachedJson, cachedJson, sendCachedJson, weakTagged } from './cached-json'
import { credentialRoutes } from './credential'
import { anyBody, attestationChallengeHeader, dpopNonceHeader, requireTenant, tenantParams } from './shared'

const NO_STORE = 'no-store'
// Metadata: cached, but revalidated on every use (a 304 costs little), so that a configuration
// added a moment ago is never missing from a wallet's copy.
const REVALIDATE = 'public, no-cache'

/** The wallet-facing OpenID4VCI 1.0 endpoints of every tenant (DESIGN.md issuer routes). */
export function oid4vciRoutes(deps: IssuanceDeps, limits: WalletLimits): FastifyPluginAsyncZod {
  const scopes = perTenantScope(deps)
  const service = perTenant((tenant) => createIssuanceService(scopes(tenant)))
  const encryption = perTenant((tenant) => createCredentialEncryption(scopes(tenant)))
  const grantScope = perTenant((tenant) => createGrantScope(scopes(tenant)))

  // Built once per read of the tenant's configurations and key chains (both cached objects).
  // The JSON text too: wallets fetch the metadata in every flow, and it grows with the configurations.
  const built = new WeakMap<
    object,
    { sources: unknown[]; metadata: ReturnType<typeof issuerMetadata>; document: CachedJson }
  >()
  const authorizationServer = new WeakMap<object, CachedJson>()
  // Signed once per metadata document and trust chain (a federation member's chain is kept until
  // its earliest exp), not per request: wallets ask for it in every flow.
  const signed = new WeakMap<CachedJson, { chain?: TrustChainResult; jwt: CachedJson | undefined }>()

  async function signedMetadataOf(
    req: FastifyRequest,
    tenant: string,
    built: Awaited<ReturnType<typeof metadataOf>>,
  ) {
    const { metadata, document, configs } = built
    let chain: TrustChainResult | undefined
    if (await deps.tenants.federation(tenant))
      try {
        chain = await ownTrustChain(deps, tenant, {
          entityId: metadata.credential_issuer,
          metadata: () => issuerEntityMetadata(deps, tenant, metadata, configs),
          version: document.etag,
        })
      } catch (error) {
        if (!(error instanceof RuleViolationError)) throw error
        // A member's JWT without its chain would misstate its trust: the JSON (§12.2.2) it is.
        req.log.warn({ tenant, reason: error.message }, 'signed metadata: no trust chain, answering JSON')
        return undefined
      }
    const known = signed.get(document)
    if (known && known.chain === chain) return known.jwt
    const jwt = await signedIssuerMetadata(scopes(tenant), metadata, configs, chain?.statements)
    // A weak tag (RFC 9110 §8.8.1): each process signs anew (ECDSA), so the bytes differ, but the
    // same metadata signed with the same key is the same answer, and any process's 304 will do. A
    // chain's expiry is in it: a wallet must not keep a JWT whose trust_chain has run out.
    const tag =
      jwt && `${document.etag}|${decodeProtectedHeader(jwt).kid}|${chain?.expiresAt.getTime() ?? ''}`
    const entry = { chain, jwt: tag ? weakTagged(jwt as string, tag) : undefined }
    signed.set(document, entry)
    return entry.jwt
  }

  async function metadataOf(tenant: string) {
    const found = await deps.tenants.tenant(tenant)
    if (!found) throw new NotFoundError('issuer', tenant)
    const configs = await deps.tenants.credentialConfigs(tenant)
    const chains = await deps.keys.keyChains(tenant)
    const authServers = await deps.tenants.authServers(tenant)
    const known = built.get(configs)
    if (known?.sources[0] === found && known.sources[1] === chains && known.sources[2] === authServers)
      return { metadata: known.metadata, document: known.document, configs }
    const withAlgs = configs.map((config) => ({
      config,
      signingAlg: chains.find((chain) => chain.id === config.keyChainId)?.algorithm ?? 'ES256',
    }))
    const metadata = issuerMetadata({
      issuer: service(tenant).issuer,
      tenantName: found.name,
      issuerDisplay: found.issuerDisplay,
      configs: withAlgs,
      authorizationServers: authServers.map((server) => server.issuer),
      encryption: {
        key: await encryption(tenant).publicKey(),
        required: found.credentialEncryption === 'required',
      },
    })
    const document = cachedJson(metadata)
    built.set(configs, { sources: [found, chains, authServers], metadata, document })
    return { metadata, document, configs }
  }

  const dpopNonce = dpopNonceHeader(deps)
  /** What the protected endpoints check: headers, method and public URL (the DPoP `htu`). */
  const resource = (req: FastifyRequest, tenant: string, endpoint: string) => ({
    headers: req.headers,
    method: req.method,
    url: `${service(tenant).issuer}/${endpoint}`,
  })

  return async (app) => {
    await app.register(formbody)

    // OpenID4VCI §12.2.2: well-known path insertion before the issuer path.
    app.get(
      '/.well-known/openid-credential-issuer/issuers/:tenant',
      { schema: { params: tenantParams } },
      async (req, reply) => {
        const built = await metadataOf(req.params.tenant)
        // The answer depends on Accept: a shared cache must not hand the JSON to a JWT reader.
        // Added to, not replaced: CORS_ORIGINS puts `Origin` there first.
        const vary = reply.getHeader('vary')
        reply.header('vary', vary ? `${vary}, Accept` : 'Accept')
        // §12.2.3: signed metadata when the wallet accepts it (and a configuration has a key to sign with).
        const jwt = String(req.headers.accept ?? '').includes('application/jwt')
          ? await signedMetadataOf(req, req.params.tenant, built)
          : undefined
        if (!jwt) return sendCachedJson(req, reply, built.document, REVALIDATE)
        return sendCachedJson(req, reply, jwt, REVALIDATE, 'application/jwt')
      },
    )

    app.get(
      '/.well-known/oauth-authorization-server/issuers/:tenant',
      { schema: { params: tenantParams } },
      async (req, reply) => {
        await requireTenant(deps, req.params.tenant)
        // Built once per read of the tenant's configurations (a cached object, dropped on change).
        const configs = await deps.tenants.credentialConfigs(req.params.tenant)
        let document = authorizationServer.get(configs)
        if (!document) {
          document = cachedJson(authorizationServerMetadata(service(req.params.tenant).issuer, configs))
          authorizationServer.set(configs, document)
        }
        return sendCachedJson(req, reply, document, REVALIDATE)
      },
    )

    // OpenID Federation 1.0 §9: the issuer as a federation entity, with the metadata it publishes.
    app.get(
      '/issuers/:tenant/.well-known/openid-federation',
      { schema: { params: tenantParams } },
      async (req, reply) => {
        const { tenant } = req.params
        const { metadata, configs } = await metadataOf(tenant)
        const jwt = await signEntityConfiguration(
          deps,
          tenant,
          service(tenant).issuer,
          await issuerEntityMetadata(deps, tenant, metadata, configs),
        )
        return reply.type(ENTITY_STATEMENT_TYPE).header('cache-control', 'public, max-age=60').send(jwt)
      },
    )

    app.get(
      '/issuers/:tenant/offers/:id',
      {
        schema: { params: tenantParams.extend({ id: z.string().max(100) }) },
        onRequest: walletLimit(app, limits, 'offer'),
      },
      async (req, reply) => {
        const offer = await service(req.params.tenant).offer(req.params.id)
        // The offer id is a bearer capability: it stays out of the detail, which is logged.
        if (!offer) throw new NotFoundError('credential offer')
        return reply.header('cache-control', NO_STORE).send(offer)
      },
    )

    app.post(
      '/issuers/:tenant/token',
      {
        schema: { params: tenantParams, body: anyBody },
        onRequest: [walletLimit(app, limits, 'token'), dpopNonce, attestationChallengeHeader(deps)],
      },
      async (req, reply) => {
        const tenant = req.params.tenant
        await requireTenant(deps, tenant)
        // DPoP first: a use_dpop_nonce answer then leaves the wallet's attestation PoP unspent.
        const dpop = await verifyDpop(scopes(tenant), { ...resource(req, tenant, 'token'), at: 'token' })
        const clientId = req.body.client_id
        const walletClient = await authenticateWalletClient(scopes(tenant), {
          headers: req.headers,
          clientId: typeof clientId === 'string' ? clientId : undefined,
        })
        // Parsed after the sender is authenticated, the order in which the endpoint has always refused.
        const token = await exchangeToken(parseAccessTokenRequest(req.body), {
          ...grantScope(tenant),
          dpopJkt: dpop?.jkt,
          walletClient,
        })
        return reply.header('cache-control', NO_STORE).send(token)
      },
    )

    await app.register(authorizationRoutes(deps, limits))

    app.post(
      '/issuers/:tenant/nonce',
      { schema: { params: tenantParams }, onRequest: [walletLimit(app, limits, 'nonce'), dpopNonce] },
      async (req, reply) => {
        await requireTenant(deps, req.params.tenant)
        return reply.header('cache-control', NO_STORE).send(await service(req.params.tenant).nonce())
      },
    )

    // ABCA (-10) §8: the challenge endpoint of the authorization server (`challenge_endpoint`).
    app.post(
      '/issuers/:tenant/challenge',
      { schema: { params: tenantParams }, onRequest: walletLimit(app, limits, 'challenge') },
      async (req, reply) => {
        await requireTenant(deps, req.params.tenant)
        return reply
          .header('cache-control', NO_STORE)
          .send({ attestation_challenge: deps.attestationChallenges.issue(req.params.tenant) })
      },
    )

    await app.register(credentialRoutes(deps, limits))

    app.post(
      '/issuers/:tenant/notification',
      {
        schema: { params: tenantParams, body: anyBody },
        onRequest: [walletLimit(app, limits, 'notification'), dpopNonce],
      },
      async (req, reply) => {
        await requireTenant(deps, req.params.tenant)
        const issuer = service(req.params.tenant)
        const token = await issuer.authorize(resource(req, req.params.tenant, 'notification'))
        await issuer.notification(token, parseNotificationRequest(req.body))
        return reply.status(204).send()
      },
    )
  }
}
