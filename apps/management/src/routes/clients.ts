import {
  type IdentityProviderAdmin,
  zClient,
  zClientCreate,
  zClientId,
  zClientSecretRotate,
  zClientUpdate,
  zClientWithSecret,
  zPage,
  zPageQuery,
} from '@credential-service/core-domain'
import type { Database } from '@credential-service/db-schema'
import { problemResponses, tenantMount } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { createClientService } from '../services/client-service'

const READ = ['tenant:manage', 'tenant:admin', 'tenant:read'] as const
const WRITE = ['tenant:manage', 'tenant:admin'] as const

/**
 * API clients, mounted twice (DESIGN.md): under `/api/tenants/{tenantId}/clients`, and as the
 * shorthand `/api/clients` whose tenant is the token's (operator clients for an operator).
 */
export function clientRoutes(
  db: Database,
  mount: { tenantInPath: boolean },
  /** OIDC mode: the identity provider that holds the clients' credentials. */
  provider?: IdentityProviderAdmin,
): FastifyPluginAsyncZod {
  const { base, item, op, listParams, itemParams } = tenantMount({
    collection: 'clients',
    tenantInPath: mount.tenantInPath,
    itemKey: 'clientId',
    itemSchema: zClientId,
  })
  const tags = ['clients']
  const scopeNote = mount.tenantInPath
    ? undefined
    : 'Shorthand: acts on the tenant of the access token; an operator token acts on operator clients.'

  return async (app) => {
    const service = (req: {
      principal: Parameters<typeof createClientService>[2]
      tenantScope: string | null
    }) => createClientService(db, req.tenantScope, req.principal, provider)

    app.get(
      base,
      {
        config: { roles: READ },
        schema: {
          operationId: op('listClients'),
          tags,
          summary: 'List API clients',
          description: scopeNote,
          params: listParams,
          querystring: zPageQuery,
          response: { 200: zPage(zClient), ...problemResponses },
        },
      },
      (req) => service(req).list(req.query),
    )

    app.post(
      base,
      {
        config: { roles: WRITE },
        schema: {
          operationId: op('createClient'),
          tags,
          summary: 'Create an API client; the response carries its secret, shown only this once',
          description: scopeNote,
          params: listParams,
          body: zClientCreate,
          response: { 201: zClientWithSecret, ...problemResponses },
        },
      },
      async (req, reply) => reply.status(201).send(await service(req).create(req.body)),
    )

    app.get(
      item,
      {
        config: { roles: READ },
        schema: {
          operationId: op('getClient'),
          tags,
          summary: 'Get an API client (never its secret)',
          params: itemParams,
          response: { 200: zClient, ...problemResponses },
        },
      },
      (req) => service(req).get(req.params.clientId),
    )

    app.patch(
      item,
      {
        config: { roles: WRITE },
        schema: {
          operationId: op('updateClient'),
          tags,
          summary: 'Update roles, allowed configuration lists or description',
          params: itemParams,
          body: zClientUpdate,
          response: { 200: zClient, ...problemResponses },
        },
      },
      (req) => service(req).update(req.params.clientId, req.body),
    )

    app.post(
      `${item}/rotate-secret`,
      {
        config: { roles: WRITE },
        schema: {
          operationId: op('rotateClientSecret'),
          tags,
          summary: 'Replace the client secret; the old one stops working at once',
          description:
            'Access tokens already issued stay valid until they expire (verification is stateless).',
          params: itemParams,
          body: zClientSecretRotate.nullish(),
          response: { 200: zClientWithSecret, ...problemResponses },
        },
      },
      (req) => service(req).rotateSecret(req.params.clientId, req.body ?? {}),
    )

    app.delete(
      item,
      {
        config: { roles: WRITE },
        schema: {
          operationId: op('deleteClient'),
          tags,
          summary: 'Delete an API client',
          params: itemParams,
          response: { 204: z.null().describe('Deleted'), ...problemResponses },
        },
      },
      async (req, reply) => {
        await service(req).delete(req.params.clientId)
        return reply.status(204).send(null)
      },
    )
  }
}
