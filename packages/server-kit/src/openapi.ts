import { zProblem } from '@credential-service/core-domain'
import type { SwaggerTransform, SwaggerTransformObject } from '@fastify/swagger'
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod'
import { PROBLEM_STATUSES } from './problem'

/** Error responses of a management route for its schema, from the one problem table. */
export const problemResponses = Object.fromEntries(
  PROBLEM_STATUSES.map((status) => [status, zProblem]),
) as Record<(typeof PROBLEM_STATUSES)[number], typeof zProblem>

type Json = unknown
type Schemas = Record<string, Json>

/** An OpenAPI Example Object. */
export interface OpenApiExample {
  summary: string
  description?: string
  value: unknown
}

/** Where a route's body examples ride from {@link openApiTransform} to {@link openApiTransformObject}. */
const EXAMPLES_MEMBER = 'x-request-examples'

/**
 * `transform` for @fastify/swagger: fastify-type-provider-zod's, `security: []` on a public
 * operation (OpenAPI: an empty list overrides the document's default), plus the named examples
 * `examplesOf` gives for a route's body schema. A body described as a `$ref` keeps no sibling
 * members, so the examples ride on the operation (@fastify/swagger copies `x-` members there),
 * and {@link openApiTransformObject} files them under each media type of the request body.
 */
export function openApiTransform(
  examplesOf: (body: unknown) => Record<string, OpenApiExample> | undefined,
): SwaggerTransform {
  return (route) => {
    const described = jsonSchemaTransform(route)
    // A route without roles (the role guard adds `security` to the others) needs no token.
    if (!(described.schema as { security?: unknown }).security)
      (described.schema as Record<string, unknown>).security = []
    const examples = examplesOf(route.schema?.body)
    if (examples && described.schema.body)
      (described.schema as Record<string, unknown>)[EXAMPLES_MEMBER] = examples
    return described
  }
}

/**
 * `transformObject` for @fastify/swagger: the named zod schemas (`.meta({ id })`) as
 * `components.schemas`, tidied by {@link tidySchemaComponents}; problem answers under their media
 * type, and the request body examples of {@link openApiTransform} in place.
 */
export const openApiTransformObject: SwaggerTransformObject = (document) => {
  const openapi = requestExamples(
    problemMediaType(
      jsonSchemaTransformObject(document) as { components?: { schemas?: Schemas }; paths?: Paths },
    ),
  )
  const schemas = openapi.components?.schemas
  if (!schemas) return openapi as ReturnType<SwaggerTransformObject>
  return tidySchemaComponents(
    openapi as { components: { schemas: Schemas } },
  ) as ReturnType<SwaggerTransformObject>
}

type Paths = Record<
  string,
  Record<
    string,
    {
      requestBody?: { content?: Record<string, Record<string, Json>> }
      responses?: Record<string, { content?: Record<string, Json> }>
      [EXAMPLES_MEMBER]?: Record<string, OpenApiExample>
    }
  >
>

/** The examples {@link openApiTransform} put on an operation, as `examples` of its body's media types. */
function requestExamples<D extends { paths?: Paths }>(document: D): D {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const examples = operation[EXAMPLES_MEMBER]
      if (!examples) continue
      delete operation[EXAMPLES_MEMBER]
      for (const media of Object.values(operation.requestBody?.content ?? {})) media.examples = examples
    }
  }
  return document
}

/**
 * Problem answers are sent as `application/problem+json` (RFC 9457 §3); fastify-swagger files every
 * response schema under `application/json`, so they are re-filed under the media type the client
 * actually receives. OAuth error answers (token endpoint) stay `application/json` (RFC 6749 §5.2).
 */
export function problemMediaType<D extends { paths?: Paths }>(document: D): D {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const json = response.content?.['application/json'] as { schema?: { $ref?: string } } | undefined
        if (Number(status) < 400 || json?.schema?.$ref !== `${REF_PREFIX}Problem` || !response.content)
          continue
        const { 'application/json': _, ...others } = response.content
        response.content = { 'application/problem+json': json, ...others }
      }
    }
  }
  return document
}

/**
 * fastify-type-provider-zod emits every registered schema twice, `X` as it is answered and `XInput`
 * as it is accepted (defaults make fields optional on input), whether a route uses it or not. This
 * keeps the components some operation reaches, and names an input variant `X` when the output
 * variant is unused or identical, so a request body reads `TenantCreate`, not `TenantCreateInput`.
 */
export function tidySchemaComponents<D extends { components: { schemas: Schemas } }>(document: D): D {
  let current = document
  for (;;) {
    const schemas = current.components.schemas
    const used = reachableSchemas(current)
    const renames = new Map<string, string>()
    for (const input of used) {
      const base = input.endsWith('Input') ? input.slice(0, -'Input'.length) : undefined
      if (base === undefined || !(base in schemas)) continue
      if (!used.has(base) || sameJson(schemas[input], schemas[base])) renames.set(input, base)
    }
    const pruned: Schemas = {}
    for (const name of Object.keys(schemas).sort()) {
      if (!used.has(name)) continue
      const target = renames.get(name) ?? name
      if (renames.has(name) && used.has(target)) continue // identical to the kept output variant
      pruned[target] = schemas[name]
    }
    const next = renameRefs({ ...current, components: { ...current.components, schemas: pruned } }, renames)
    if (renames.size === 0) return next
    current = next
  }
}

const REF_PREFIX = '#/components/schemas/'

/** Component names reachable from the operations, following `$ref`s through the components. */
function reachableSchemas(document: { components: { schemas: Schemas } }): Set<string> {
  const { components, ...rest } = document
  const used = new Set<string>()
  const pending: Json[] = [rest, { ...components, schemas: undefined }]
  while (pending.length) {
    const node = pending.pop()
    if (Array.isArray(node)) pending.push(...node)
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string' && value.startsWith(REF_PREFIX)) {
          const name = value.slice(REF_PREFIX.length)
          if (!used.has(name)) {
            used.add(name)
            pending.push(components.schemas[name])
          }
        } else pending.push(value)
      }
    }
  }
  return used
}

function renameRefs<T>(node: T, renames: Map<string, string>): T {
  if (renames.size === 0) return node
  return JSON.parse(JSON.stringify(node), (key, value) => {
    if (key !== '$ref' || typeof value !== 'string' || !value.startsWith(REF_PREFIX)) return value
    const target = renames.get(value.slice(REF_PREFIX.length))
    return target === undefined ? value : `${REF_PREFIX}${target}`
  }) as T
}

function sameJson(a: Json, b: Json): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b))
}

function sortKeys(node: Json): Json {
  if (Array.isArray(node)) return node.map(sortKeys)
  if (!node || typeof node !== 'object') return node
  return Object.fromEntries(
    Object.entries(node)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, value]) => [key, sortKeys(value)]),
  )
}
