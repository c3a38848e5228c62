import {
  zPage,
  zPageQuery,
  zTenant,
  zTenantCreate,
  zTenantId,
  zTenantUpdate,
} from '@credential-service/core-domain'
import { problemResponses } from '@credential-service/server-kit'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { TenantService } from '../services/tenant-service'

const params = z.object({ tenantId: zTenantId })
const tags = ['tenants']

export function tenantRoutes(tenants: TenantService): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/tenants',
      {
        config: { roles: ['tenant:manage', 'tenant:read'] },
        schema: {
          operationId: 'listTenants',
          tags,
          summary: 'List tenants (a tenant-bound client sees its own only)',
          querystring: zPageQuery,
          response: { 200: zPage(zTenant), ...problemResponses },
        },
      },
      (req) => tenants.list(req.principal, req.query),
    )

    app.post(
      '/api/tenants',
      {
        config: { roles: ['tenant:manage'] },
        schema: {
          operationId: 'createTenant',
          tags,
          summary: 'Create a tenant',
          body: zTenantCreate,
          response: { 201: zTenant, ...problemResponses },
        },
      },
      async (req, reply) => reply.status(201).send(await tenants.create(req.principal, req.body)),
    )

    app.get(
      '/api/tenants/:tenantId',
      {
        config: { roles: ['tenant:manage', 'tenant:read', 'tenant:admin'] },
        schema: {
          operationId: 'getTenant',
          tags,
          summary: 'Get a tenant',
          params,
          response: { 200: zTenant, ...problemResponses },
        },
      },
      (req) => tenants.get(req.principal, req.params.tenantId),
    )

    app.patch(
      '/api/tenants/:tenantId',
      {
        config: { roles: ['tenant:manage', 'tenant:admin'] },
        schema: {
          operationId: 'updateTenant',
          tags,
          summary: 'Update a tenant’s name, description or settings',
          params,
          body: zTenantUpdate,
          response: { 200: zTenant, ...problemResponses },
        },
      },
      (req) => tenants.update(req.principal, req.params.tenantId, req.body),
    )

    app.delete(
      '/api/tenants/:tenantId',
      {
        config: { roles: ['tenant:manage'] },
        schema: {
          operationId: 'deleteTenant',
          tags,
          summary: 'Delete a tenant and everything it owns',
          params,
          response: { 204: z.null().describe('Deleted'), ...problemResponses },
        },
      },
      async (req, reply) => {
        await tenants.delete(req.principal, req.params.tenantId)
        return reply.status(204).send(null)
      },
    )
  }
}
