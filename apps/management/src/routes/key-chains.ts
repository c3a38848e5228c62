import {
  zKeyChain,
  zKeyChainCreate,
  zKeyChainId,
  zKeyChainRotate,
  zKeyChainUpdate,
  zPage,
  zPageQuery,
} from '@credential-service/core-domain'
import { problemResponses, requireTenantScope, tenantMount } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { createKeyChainService, type KeyChainServiceDeps } from '../services/key-chain-service'

const READ = ['key:manage', 'key:read'] as const
const WRITE = ['key:manage'] as const

/**
 * Key chains (spec §2.4) under `/api/tenants/{tenantId}/key-chains` and the token-tenant shorthand
 * `/api/key-chains`. Responses carry public keys and certificates only.
 */
export function keyChainRoutes(
  deps: KeyChainServiceDeps,
  mount: { tenantInPath: boolean },
): FastifyPluginAsyncZod {
  const { base, item, op, listParams, itemParams } = tenantMount({
    collection: 'key-chains',
    tenantInPath: mount.tenantInPath,
    itemKey: 'keyChainId',
    itemSchema: zKeyChainId,
  })
  const tags = ['key-chains']

  return async (app) => {
    const service = (req: Parameters<typeof requireTenantScope>[0]) =>
      createKeyChainService(deps, requireTenantScope(req), req.principal)

    app.get(
      base,
      {
        config: { roles: READ },
        schema: {
          operationId: op('listKeyChains'),
          tags,
          summary: 'List key chains',
          params: listParams,
          querystring: zPageQuery,
          response: { 200: zPage(zKeyChain), ...problemResponses },
        },
      },
      (req) => service(req).list(req.query),
    )

    app.post(
      base,
      {
        config: { roles: WRITE },
        schema: {
          operationId: op('createKeyChain'),
          tags,
          summary:
            'Create a key chain: generate, import, or register a Vault / AWS KMS / PKCS#11 / Azure Key Vault / Cloud KMS key',
          description:
            '`source: generate` makes a new key in the database, or on the PKCS#11 token with `kmsProvider: pkcs11` (not extractable), its leaf certificate issued by an internal CA of the key chain (`certificate.mode: self-signed` for development, database keys only); `import` takes a private JWK or PEM, kept encrypted in the database or imported into Azure Key Vault (`kmsProvider: azure-key-vault`, Import Key) or Google Cloud KMS (`kmsProvider: gcp-kms`, an import job into `GCP_KMS_KEY_RING`), which signs with it from then on; `external` registers a key held by Vault transit, AWS KMS, a PKCS#11 token, Azure Key Vault or Google Cloud KMS by `externalKeyId`. A PKCS#11 module or token this service cannot use is a 400 naming `kmsProvider`.',
          params: listParams,
          body: zKeyChainCreate,
          response: { 201: zKeyChain, ...problemResponses },
        },
      },
      async (req, reply) => reply.status(201).send(await service(req).create(req.body)),
    )

    app.get(
      item,
      {
        config: { roles: READ },
        schema: {
          operationId: op('getKeyChain'),
          tags,
          summary: 'Get a key chain (public keys and certificates only)',
          params: itemParams,
          response: { 200: zKeyChain, ...problemResponses },
        },
      },
      (req) => service(req).get(req.params.keyChainId),
    )

    app.patch(
      item,
      {
        config: { roles: WRITE },
        schema: {
          operationId: op('updateKeyChain'),
          tags,
          summary: 'Update description, rotation policy or the active certificate chain',
          params: itemParams,
          body: zKeyChainUpdate,
          response: { 200: zKeyChain, ...problemResponses },
        },
      },
      (req) => service(req).update(req.params.keyChainId, req.body),
    )

    app.post(
      `${item}/rotate`,
      {
        config: { roles: WRITE },
        schema: {
          operationId: op('rotateKeyChain'),
          tags,
          summary: 'Rotate now: a new active key; the old one stays published through the grace period',
          params: itemParams,
          body: zKeyChainRotate.nullish(),
          response: { 200: zKeyChain, ...problemResponses },
        },
      },
      (req) => service(req).rotate(req.params.keyChainId, req.body ?? {}),
    )

    app.delete(
      item,
      {
        config: { roles: WRITE },
        schema: {
          operationId: op('deleteKeyChain'),
          tags,
          summary: 'Delete a key chain',
          params: itemParams,
          response: { 204: z.null().describe('Deleted'), ...problemResponses },
        },
      },
      async (req, reply) => {
        await service(req).delete(req.params.keyChainId)
        return reply.status(204).send(null)
      },
    )
  }
}
