import { z } from 'zod'
import type { ClaimField, CredentialConfigData, FieldType } from '../contract/credential-config'
import type { ValidationIssue } from '../errors'
import { sdJwtStructureIssues } from './sd-jwt-names'

type Claims = Record<string, unknown>

function leafSchema(type: FieldType): z.ZodType {
  switch (type) {
    case 'string':
      return z.string()
    case 'number':
      return z.number()
    case 'integer':
      return z.int()
    case 'boolean':
      return z.boolean()
    case 'date':
      return z.iso.date()
    case 'date-time':
      return z.iso.datetime({ offset: true })
    case 'array':
      return z.array(z.unknown())
    case 'object':
      return z.record(z.string(), z.unknown())
  }
}

/** Where a field sits in the claims object: mdoc claims are grouped by namespace first. */
export function claimPath(field: ClaimField): string[] {
  return field.namespace === undefined ? field.path : [field.namespace, ...field.path]
}

interface Node {
  children: Map<string, Node>
  field?: ClaimField
}

function tree(fields: ClaimField[]): Node {
  const root: Node = { children: new Map() }
  for (const field of fields) {
    let node = root
    for (const part of claimPath(field)) {
      let next = node.children.get(part)
      if (!next) {
        next = { children: new Map() }
        node.children.set(part, next)
      }
      node = next
    }
    node.field = field
  }
  return root
}

function required(node: Node): boolean {
  return node.field ? node.field.mandatory === true : [...node.children.values()].some(required)
}

function schemaOf(node: Node): z.ZodType {
  if (node.field) return leafSchema(node.field.type)
  const shape: Record<string, z.ZodType> = {}
  for (const [name, child] of node.children)
    shape[name] = required(child) ? schemaOf(child) : schemaOf(child).optional()
  return z.object(shape).strict()
}

/**
 * The validator of a configuration's claims, derived from `fields` at run time and never stored
 * (spec §2.1): declared claims only, mandatory ones present, values of the declared types.
 */
export function deriveClaimsSchema(config: Pick<CredentialConfigData, 'fields'>): z.ZodType<Claims> {
  let schema = derived.get(config.fields)
  if (!schema) {
    schema = schemaOf(tree(config.fields)) as z.ZodType<Claims>
    derived.set(config.fields, schema)
  }
  return schema
}
// Per `fields` array: configurations served from the tenant cache keep theirs between requests,
// and a changed configuration is a new object, so a stale schema is never found.
const derived = new WeakMap<readonly object[], z.ZodType<Claims>>()

/** The same derivation as a JSON Schema document, for integrators. */
export function deriveClaimsJsonSchema(
  config: Pick<CredentialConfigData, 'fields' | 'id'>,
): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: `Claims of ${config.id}`,
    ...(z.toJSONSchema(deriveClaimsSchema(config)) as Record<string, unknown>),
  }
}

function setAt(target: Claims, path: string[], value: unknown): void {
  let node = target
  path.slice(0, -1).forEach((part) => {
    if (typeof node[part] !== 'object' || node[part] === null) node[part] = {}
    node = node[part] as Claims
  })
  node[path.at(-1) as string] = value
}

function merge(base: Claims, over: Claims): Claims {
  const out: Claims = { ...base }
  for (const [key, value] of Object.entries(over)) {
    const existing = out[key]
    const bothObjects =
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      typeof existing === 'object' &&
      existing !== null &&
      !Array.isArray(existing)
    out[key] = bothObjects ? merge(existing as Claims, value as Claims) : value
  }
  return out
}

/** The claims issued when no other source gives any: every field's `defaultValue`. */
export function defaultClaims(config: Pick<CredentialConfigData, 'fields'>): Claims {
  const claims: Claims = {}
  for (const field of config.fields)
    if (field.defaultValue !== undefined) setAt(claims, claimPath(field), field.defaultValue)
  return claims
}

export type ClaimsResult = { ok: true; claims: Claims } | { ok: false; issues: ValidationIssue[] }

/**
 * Claims to issue: defaults overlaid with what a source supplied (offer, login, attribute provider),
 * validated against the derived schema and free of SD-JWT structure names (checklist S-129). The
 * caller names the source in `prefix`.
 */
export function resolveClaims(
  config: Pick<CredentialConfigData, 'fields'>,
  supplied: Claims = {},
  prefix = 'claims',
): ClaimsResult {
  const claims = merge(defaultClaims(config), supplied)
  const result = deriveClaimsSchema(config).safeParse(claims)
  if (result.success) {
    const structure = sdJwtStructureIssues(result.data, prefix)
    return structure.length ? { ok: false, issues: structure } : { ok: true, claims: result.data }
  }
  return {
    ok: false,
    issues: result.error.issues.flatMap((issue) => {
      const base = [prefix, ...issue.path.map(String)].join('.')
      if (issue.code === 'unrecognized_keys')
        return issue.keys.map((key) => ({
          path: `${base}.${key}`,
          message: `'${key}' is not a field of this configuration`,
        }))
      return [{ path: base, message: issue.message }]
    }),
  }
}
