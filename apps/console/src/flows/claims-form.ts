import { type ClaimField, claimPath, type FieldType, resolveClaims } from '@credential-service/core-domain'

type Claims = Record<string, unknown>

/** One input of the claims form: a leaf claim of a credential configuration. */
export interface ClaimInput {
  /** Where the value goes in the claims object (mdoc: the namespace first, as `claimPath`). */
  path: string[]
  type: FieldType
  /** The configuration requires the claim (a `mandatory` field). */
  mandatory: boolean
  /** The field's display name in `locale`, else the first one, else the path. */
  label: string
  /** The input's first text: the field's `defaultValue`, empty when it has none. */
  initial: string
}

const labelOf = (field: ClaimField, locale: string): string => {
  const names = (field.display ?? []).map((display) =>
    'name' in display
      ? { locale: display.locale, name: display.name }
      : { locale: display.lang, name: display.label },
  )
  const name = names.find((entry) => entry.locale === locale)?.name ?? names[0]?.name
  const path = claimPath(field).join('.')
  return name ? `${name} (${path})` : path
}

/** The claims form of a configuration's `fields`: one input per field, in their order. */
export function claimInputsFromFields(fields: readonly ClaimField[], locale = 'en'): ClaimInput[] {
  return fields.map((field) => ({
    path: claimPath(field),
    type: field.type,
    mandatory: field.mandatory === true,
    label: labelOf(field, locale),
    initial: field.defaultValue === undefined ? '' : textOf(field.type, field.defaultValue),
  }))
}

type JsonSchema = {
  type?: string
  format?: string
  properties?: Record<string, JsonSchema>
  required?: string[]
}

/**
 * The claims form of a configuration's claims JSON Schema (`GET …/credentials/{id}/schema`), for
 * a client with `issuance:offer` only, which may not read the configuration's `fields`: the
 * schema is derived from them (deriveClaimsJsonSchema), leaves and `required` as the fields say.
 * It has no display names and no defaults.
 */
export function claimInputsFromSchema(schema: Record<string, unknown>): ClaimInput[] {
  const inputs: ClaimInput[] = []
  const walk = (node: JsonSchema, path: string[], mandatory: boolean) => {
    if (node.type === 'object' && node.properties) {
      for (const [name, child] of Object.entries(node.properties))
        walk(child, [...path, name], node.required?.includes(name) === true)
      return
    }
    if (path.length === 0) return
    inputs.push({ path, type: leafType(node), mandatory, label: path.join('.'), initial: '' })
  }
  walk(schema as JsonSchema, [], true)
  return inputs
}

function leafType(node: JsonSchema): FieldType {
  if (node.type === 'string' && (node.format === 'date' || node.format === 'date-time')) return node.format
  switch (node.type) {
    case 'number':
    case 'integer':
    case 'boolean':
    case 'array':
    case 'object':
      return node.type
    default:
      return 'string'
  }
}

/** A claim value as its input shows it: JSON for arrays and objects, `true`/`false` for booleans. */
export function textOf(type: FieldType, value: unknown): string {
  if (type === 'array' || type === 'object') return JSON.stringify(value)
  return String(value)
}

export type ParsedValue = { ok: true; value: unknown } | { ok: false; message: string }

/** An input's text as the claim value of its type; the message says what the type needs. */
export function parseClaimValue(type: FieldType, text: string): ParsedValue {
  const trimmed = text.trim()
  switch (type) {
    case 'string':
      return { ok: true, value: text }
    case 'number':
    case 'integer': {
      const value = Number(trimmed)
      if (trimmed === '' || !Number.isFinite(value)) return { ok: false, message: 'Enter a number' }
      if (type === 'integer' && !Number.isInteger(value))
        return { ok: false, message: 'Enter a whole number' }
      return { ok: true, value }
    }
    case 'boolean':
      return trimmed === 'true' || trimmed === 'false'
        ? { ok: true, value: trimmed === 'true' }
        : { ok: false, message: 'Pick yes or no' }
    case 'date':
      return /^\d{4}-\d{2}-\d{2}$/.test(trimmed)
        ? { ok: true, value: trimmed }
        : { ok: false, message: 'Enter a date as YYYY-MM-DD' }
    case 'date-time':
      return Number.isNaN(Date.parse(trimmed)) || !/(Z|[+-]\d{2}:\d{2})$/.test(trimmed)
        ? { ok: false, message: 'Enter a time as 2026-01-31T12:00:00Z (with Z or an offset)' }
        : { ok: true, value: trimmed }
    case 'array':
    case 'object': {
      try {
        const value: unknown = JSON.parse(trimmed)
        const isArray = Array.isArray(value)
        if (type === 'array' ? isArray : typeof value === 'object' && value !== null && !isArray)
          return { ok: true, value }
      } catch {
        // reported below
      }
      return { ok: false, message: type === 'array' ? 'Enter a JSON array' : 'Enter a JSON object' }
    }
  }
}

export interface ClaimsFromInputs {
  claims: Claims
  /** Messages by input index: a mandatory input left empty, a text its type cannot read. */
  errors: Record<number, string>
}

/**
 * The claims object of the form's texts (one per input, in order): empty inputs are left out, the
 * others parsed by type and set at their path.
 */
export function claimsFromInputs(inputs: readonly ClaimInput[], texts: readonly string[]): ClaimsFromInputs {
  const claims: Claims = {}
  const errors: Record<number, string> = {}
  inputs.forEach((input, index) => {
    const text = texts[index] ?? ''
    if (text.trim() === '') {
      if (input.mandatory) errors[index] = 'Required by the configuration'
      return
    }
    const parsed = parseClaimValue(input.type, text)
    if (parsed.ok) setAt(claims, input.path, parsed.value)
    else errors[index] = parsed.message
  })
  return { claims, errors }
}

function setAt(target: Claims, path: readonly string[], value: unknown): void {
  let node = target
  for (const part of path.slice(0, -1)) {
    if (typeof node[part] !== 'object' || node[part] === null) node[part] = {}
    node = node[part] as Claims
  }
  node[path.at(-1) as string] = value
}

/**
 * The input an issue path names (`claims.address.street`, or a problem's
 * `body.claims.<configId>.address.street` with its prefix removed): the input at that path or the
 * deepest one above it; undefined when none is.
 */
export function inputOfPath(inputs: readonly ClaimInput[], path: readonly string[]): number | undefined {
  let best: number | undefined
  inputs.forEach((input, index) => {
    const within = input.path.length <= path.length && input.path.every((part, i) => part === path[i])
    if (within && (best === undefined || input.path.length > (inputs[best]?.path.length ?? 0))) best = index
  })
  return best
}

/**
 * The claims checked as the API checks them (resolveClaims: the configuration's defaults below,
 * the schema derived from its fields, SD-JWT structure names), when the fields are known: the
 * issues by input index; an issue of no input under -1.
 */
export function checkClaims(
  fields: readonly ClaimField[],
  inputs: readonly ClaimInput[],
  claims: Claims,
): Record<number, string> {
  const result = resolveClaims({ fields: [...fields] }, claims, 'claims')
  if (result.ok) return {}
  const errors: Record<number, string> = {}
  for (const issue of result.issues) {
    const index = inputOfPath(inputs, issue.path.split('.').slice(1)) ?? -1
    errors[index] ??= issue.message
  }
  return errors
}

/** The leaves of a claims object as path → value rows (arrays and objects below are walked too). */
export function claimRows(value: unknown, path: string[] = []): { path: string; value: string }[] {
  if (typeof value === 'object' && value !== null && Object.keys(value).length > 0)
    return Object.entries(value).flatMap(([key, child]) => claimRows(child, [...path, key]))
  return [{ path: path.join('.'), value: typeof value === 'string' ? value : JSON.stringify(value) }]
}

/**
 * The disclosed claims of a presentation session (per DCQL credential query id, an array when the
 * query allows several credentials) as one entry per presented credential, with its caption.
 */
export function credentialsOf(
  claims: Record<string, unknown>,
): { key: string; caption: string; disclosed: unknown }[] {
  return Object.entries(claims).flatMap(([queryId, value]) => {
    const presented = Array.isArray(value) ? value : [value]
    return presented.map((disclosed, index) => ({
      key: `${queryId}/${index}`,
      caption:
        presented.length > 1
          ? `Credential ${queryId} (${index + 1} of ${presented.length})`
          : `Credential ${queryId}`,
      disclosed,
    }))
  })
}
