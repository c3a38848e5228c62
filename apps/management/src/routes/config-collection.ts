import {
  InvalidInputError,
  type Role,
  RuleViolationError,
  type ValidationIssue,
  zConfigId,
  zPage,
  zPageQuery,
} from '@credential-service/core-domain'
import { problemResponses, requireTenantScope, tenantMount } from '@credential-service/server-kit'
import type { FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'

interface CollectionService<I, O> {
  list(query: {
    limit: number
    cursor?: string | undefined
  }): Promise<{ items: O[]; nextCursor: string | null }>
  get(id: string): Promise<O>
  create(input: I): Promise<O>
  replace(id: string, input: I): Promise<O>
  delete(id: string): Promise<void>
}

export interface ConfigCollectionOptions<I extends z.ZodType, O extends z.ZodType, C extends z.ZodType> {
  collection: string
  itemKey: string
  /** Operation id stem, e.g. `CredentialConfig` → `createCredentialConfig`. */
  name: string
  label: string
  tag: string
  /** Summary of the DELETE operation: what deleting one does, or why it may be refused. */
  deleteSummary: string
  /** Markdown shown with every operation of the collection (rules, secret handling). */
  description?: string
  roles: { read: readonly Role[]; write: readonly Role[] }
  input: I
  output: O
  /** Create/replace answer (may add a once-shown secret). */
  saved: C
  /** Checks the raw body before validation (removed 4.x fields named with their replacement). */
  rawBodyIssues?: (body: unknown) => ValidationIssue[]
  /** Rules checked on the raw body before validation, refused as rule violations (422). */
  rawBodyRuleIssues?: (body: unknown) => ValidationIssue[]
  service: (tenantId: string, request: FastifyRequest) => CollectionService<z.output<I>, z.output<O>>
  /** Headers of a create answer that tell what the service chose for the body (e.g. a default). */
  createdHeaders?: (input: z.output<I>, saved: z.output<O>) => Record<string, string>
}

/**
 * List, create, get, replace (PUT) and delete of a tenant's configuration collection, mounted under
 * the tenant and as the token-tenant shorthand.
 */
export function configCollectionRoutes<I extends z.ZodType, O extends z.ZodType, C extends z.ZodType>(
  options: ConfigCollectionOptions<I, O, C>,
  mount: { tenantInPath: boolean },
): FastifyPluginAsyncZod {
  const paths = tenantMount({
    collection: options.collection,
    tenantInPath: mount.tenantInPath,
    itemKey: options.itemKey,
    itemSchema: zConfigId,
  })
  const tags = [options.tag]
  const described = options.description ? { description: options.description } : {}
  /** The label with its article, for summaries: "an attribute provider", "a webhook endpoint". */
  const one = `${/^[aeiou]/.test(options.label) ? 'an' : 'a'} ${options.label}`
  const idOf = (req: FastifyRequest) => (req.params as Record<string, string>)[options.itemKey] as string
  const service = (req: FastifyRequest) => options.service(requireTenantScope(req), req)
  const checkRaw: preValidationAsyncHookHandler = async (req) => {
    const issues = options.rawBodyIssues?.(req.body) ?? []
    if (issues.length)
      throw new InvalidInputError(`the ${options.label} uses fields removed from this version`, issues)
    const broken = options.rawBodyRuleIssues?.(req.body) ?? []
    if (broken.length)
      throw new RuleViolationError(`the ${options.label} breaks ${broken.length} rule(s); see errors`, broken)
  }

  return async (scope) => {
    // Generic schemas defeat the type provider's inference: register through the untyped instance
    // and rely on the zod schemas at run time (they validate bodies and serialise answers).
    const app = scope as unknown as FastifyInstance
    app.get(
      paths.base,
      {
        config: { roles: options.roles.read },
        schema: {
          operationId: paths.op(`list${options.name}s`),
          tags,
          summary: `List ${options.label}s`,
          ...described,
          params: paths.listParams,
          querystring: zPageQuery,
          response: { 200: zPage(options.output), ...problemResponses },
        },
      },
      (req) => service(req).list(req.query as { limit: number; cursor?: string }),
    )

    app.post(
      paths.base,
      {
        config: { roles: options.roles.write },
        preValidation: checkRaw,
        schema: {
          operationId: paths.op(`create${options.name}`),
          tags,
          summary: `Create ${one}`,
          ...described,
          params: paths.listParams,
          body: options.input,
          response: { 201: options.saved, ...problemResponses },
        },
      },
      async (req, reply) => {
        const input = req.body as z.output<I>
        const saved = await service(req).create(input)
        return reply
          .status(201)
          .headers(options.createdHeaders?.(input, saved) ?? {})
          .send(saved)
      },
    )

    app.get(
      paths.item,
      {
        config: { roles: options.roles.read },
        schema: {
          operationId: paths.op(`get${options.name}`),
          tags,
          summary: `Get ${one}`,
          ...described,
          params: paths.itemParams,
          response: { 200: options.output, ...problemResponses },
        },
      },
      (req) => service(req).get(idOf(req)),
    )

    app.put(
      paths.item,
      {
        config: { roles: options.roles.write },
        preValidation: checkRaw,
        schema: {
          operationId: paths.op(`replace${options.name}`),
          tags,
          summary: `Replace ${one} (the path id wins over the body id)`,
          ...described,
          params: paths.itemParams,
          body: options.input,
          response: { 200: options.saved, ...problemResponses },
        },
      },
      (req) => service(req).replace(idOf(req), req.body as z.output<I>),
    )

    app.delete(
      paths.item,
      {
        config: { roles: options.roles.write },
        schema: {
          operationId: paths.op(`delete${options.name}`),
          tags,
          summary: options.deleteSummary,
          ...described,
          params: paths.itemParams,
          response: { 204: z.null().describe('Deleted'), ...problemResponses },
        },
      },
      async (req, reply) => {
        await service(req).delete(idOf(req))
        return reply.status(204).send(null)
      },
    )
  }
}
