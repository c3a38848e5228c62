import type { Principal, Role } from '@credential-service/core-domain'
import { problemResponses, requireTenantScope, tenantMount } from '@credential-service/server-kit'
import type { FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'

type App = Parameters<FastifyPluginAsyncZod>[0]

/** What a resource the tenant has at most one of (its registrar connection, its federation membership) offers. */
export interface SingletonService<Body, Resource> {
  get(): Promise<Resource>
  put(body: Body): Promise<Resource>
  delete(): Promise<void>
}

interface Operation {
  id: string
  summary: string
  description?: string
}

/**
 * GET/PUT/DELETE of a resource the tenant has at most one of, at `/api/tenants/{tenantId}/<name>`
 * or the token-tenant shorthand `/api/<name>`. Returns the mount so a caller can add routes under it.
 */
export function tenantSingleton<Input extends z.ZodType, Output extends z.ZodType>(options: {
  collection: string
  tenantInPath: boolean
  roles: readonly Role[]
  input: Input
  output: Output
  operations: { get: Operation; put: Operation; delete: Operation }
}) {
  const { base, op, listParams } = tenantMount({
    collection: options.collection,
    tenantInPath: options.tenantInPath,
    itemKey: 'unused',
    itemSchema: z.string(),
  })
  const tags = [options.collection]
  const config = { roles: options.roles }
  const schema = (operation: Operation) => ({
    operationId: op(operation.id),
    tags,
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    params: listParams,
  })

  const register = (
    app: App,
    service: (tenantId: string, principal: Principal) => SingletonService<z.infer<Input>, z.infer<Output>>,
  ) => {
    const of = (req: FastifyRequest) => service(requireTenantScope(req), req.principal)
    const { operations } = options
    // Widened: the type provider cannot resolve the reply type of a generic schema; the schema
    // still checks every answer at run time.
    const output: z.ZodType = options.output
    app.get(
      base,
      { config, schema: { ...schema(operations.get), response: { 200: output, ...problemResponses } } },
      (req) => of(req).get(),
    )
    app.put(
      base,
      {
        config,
        schema: {
          ...schema(operations.put),
          body: options.input,
          response: { 200: output, ...problemResponses },
        },
      },
      (req) => of(req).put(req.body as z.infer<Input>),
    )
    app.delete(
      base,
      {
        config,
        schema: {
          ...schema(operations.delete),
          response: { 204: z.null().describe('Deleted'), ...problemResponses },
        },
      },
      async (req, reply) => {
        await of(req).delete()
        return reply.status(204).send(null)
      },
    )
  }
  return { base, op, params: listParams, tags, config, register }
}
