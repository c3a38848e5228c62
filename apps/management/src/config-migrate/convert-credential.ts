import {
  type ClaimField,
  CREDENTIAL_FORMATS,
  type FieldType,
  formatSpec,
} from '@credential-service/core-domain'

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** What a conversion produced besides the configuration: extra files and a line per change. */
export interface ConvertedCredential {
  config: Json
  attributeProvider?: { id: string; body: Json }
  webhookEndpoint?: { id: string; body: Json }
  changes: string[]
}

function typeOf(value: unknown): FieldType {
  if (typeof value === 'boolean') return 'boolean'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  if (Array.isArray(value)) return 'array'
  if (isObject(value)) return 'object'
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)) return 'date'
  return 'string'
}

const SCHEMA_TYPES: Record<string, FieldType> = {
  string: 'string',
  number: 'number',
  integer: 'integer',
  boolean: 'boolean',
  array: 'array',
  object: 'object',
}

/** Leaf claims of a nested claims object: `{ a: { b: 1 } }` → `[["a","b"], 1]`. Arrays are leaves. */
function leaves(claims: Json, prefix: string[] = []): [string[], unknown][] {
  return Object.entries(claims).flatMap(([key, value]) =>
    isObject(value) && Object.keys(value).length > 0
      ? leaves(value, [...prefix, key])
      : [[[...prefix, key], value] as [string[], unknown]],
  )
}

/** Paths made selectively disclosable by an SD-JWT disclosure frame (`_sd` lists at each level). */
function disclosablePaths(frame: unknown, prefix: string[] = []): string[][] {
  if (!isObject(frame)) return []
  const own = Array.isArray(frame._sd) ? frame._sd.map((name) => [...prefix, String(name)]) : []
  const nested = Object.entries(frame)
    .filter(([key]) => key !== '_sd' && key !== '_sd_decoy')
    .flatMap(([key, value]) => disclosablePaths(value, [...prefix, key]))
  return [...own, ...nested]
}

/** claimsMetadata keyed by dotted path (`"address.locality"`), nested like the claims, or a list of `{path}` entries. */
function metadataByPath(metadata: unknown, prefix: string[] = []): Map<string, Json> {
  const out = new Map<string, Json>()
  // The peer product's shape: a list of `{ path: [...], display, mandatory }`.
  if (Array.isArray(metadata)) {
    for (const entry of metadata)
      if (isObject(entry) && Array.isArray(entry.path)) out.set(entry.path.map(String).join('.'), entry)
    return out
  }
  if (!isObject(metadata)) return out
  for (const [key, value] of Object.entries(metadata)) {
    if (!isObject(value)) continue
    const path = [...prefix, ...key.split('.')]
    if ('display' in value || 'mandatory' in value) out.set(path.join('.'), value)
    else for (const [nested, entry] of metadataByPath(value, path)) out.set(nested, entry)
  }
  return out
}

/** JSON Schema properties of version 1 `schema`: types (and `required`) for claims without a value. */
function schemaPaths(
  schema: unknown,
  prefix: string[] = [],
): Map<string, { type: FieldType; required: boolean }> {
  const out = new Map<string, { type: FieldType; required: boolean }>()
  if (!isObject(schema) || !isObject(schema.properties)) return out
  const required = Array.isArray(schema.required) ? schema.required.map(String) : []
  for (const [key, property] of Object.entries(schema.properties)) {
    if (!isObject(property)) continue
    const path = [...prefix, key]
    if (property.type === 'object' && isObject(property.properties)) {
      for (const [nested, info] of schemaPaths(property, path)) out.set(nested, info)
    } else {
      out.set(path.join('.'), {
        type: SCHEMA_TYPES[String(property.type)] ?? 'string',
        required: required.includes(key),
      })
    }
  }
  return out
}

function endpointAuth(auth: unknown, changes: string[], what: string): Json {
  if (!isObject(auth) || auth.type === 'none' || auth.type === undefined) return { type: 'none' }
  const config = isObject(auth.config) ? auth.config : auth
  if (auth.type === 'apiKey' || auth.type === 'api-key') {
    return {
      type: 'api-key',
      headerName: String(config.headerName ?? 'x-api-key'),
      value: String(config.value ?? ''),
    }
  }
  changes.push(
    `${what}: auth type '${String(auth.type)}' has no 5.0 equivalent; set to none, configure it by hand`,
  )
  return { type: 'none' }
}

/** Fields kept as they are: they mean the same in version 2. */
const KEPT = [
  'id',
  'description',
  'lifetimeSeconds',
  'keyBinding',
  'statusManagement',
  'batchSize',
  'attributeProviderId',
  'webhookEndpointId',
  'keyChainId',
]
const REMOVED = [
  'claims',
  'disclosureFrame',
  'schema',
  'keyId',
  'certId',
  'claimsWebhook',
  'notificationWebhook',
  'config',
  'fields',
]

/**
 * Converts a version 1 credential configuration to version 2 with the mapping of spec §9.2:
 * claims → fields[].defaultValue, disclosureFrame → fields[].disclosable, schema → derived (types kept
 * for claims without a value), claimsMetadata → fields[].display / mandatory, namespace and
 * claimsByNamespace → per-field namespace; keyId/certId → keyChainId, claimsWebhook →
 * attributeProviderId, notificationWebhook → webhookEndpointId.
 */
export function convertCredential(
  v1: Json,
  options: { id: string; keyChainOfCert: (certId: string) => string | undefined },
): ConvertedCredential {
  const changes: string[] = []
  const id = String(v1.id ?? options.id)
  const config = isObject(v1.config) ? { ...v1.config } : {}
  const format = CREDENTIAL_FORMATS.find((known) => known === config.format)
  const namespaced = format !== undefined && formatSpec(format).namespacedFields

  // Claims grouped by namespace for mdoc (namespace → claims), one group otherwise.
  const groups: [string | undefined, Json][] = []
  if (namespaced && isObject(config.claimsByNamespace)) {
    for (const [namespace, claims] of Object.entries(config.claimsByNamespace))
      if (isObject(claims)) groups.push([namespace, claims])
    changes.push('config.claimsByNamespace → one field per claim with its namespace')
  } else if (namespaced && typeof config.namespace === 'string') {
    groups.push([config.namespace, isObject(v1.claims) ? v1.claims : {}])
    changes.push(`config.namespace → fields[].namespace '${config.namespace}'`)
  } else if (namespaced && isObject(v1.claims) && Object.values(v1.claims).every(isObject)) {
    for (const [namespace, claims] of Object.entries(v1.claims)) groups.push([namespace, claims as Json])
  } else {
    groups.push([undefined, isObject(v1.claims) ? v1.claims : {}])
  }
  if (isObject(v1.claims) && Object.keys(v1.claims).length) changes.push('claims → fields[].defaultValue')

  const disclosable = new Set(disclosablePaths(v1.disclosureFrame).map((p) => p.join('.')))
  if (v1.disclosureFrame !== undefined) changes.push('disclosureFrame → fields[].disclosable')
  const metadata = metadataByPath(config.claimsMetadata)
  if (config.claimsMetadata !== undefined)
    changes.push('config.claimsMetadata → fields[].display and fields[].mandatory')
  const schema = schemaPaths(v1.schema)
  if (v1.schema !== undefined) changes.push('schema dropped: 5.0 derives it from fields[]')

  const fields: ClaimField[] = []
  const seen = new Set<string>()
  const addField = (namespace: string | undefined, path: string[], type: FieldType, value: unknown) => {
    const key = path.join('.')
    seen.add(key)
    const meta = metadata.get(key)
    // A disclosable parent (`address` in `_sd`) makes its leaves disclosable.
    const sd = path.some((_, i) => disclosable.has(path.slice(0, i + 1).join('.')))
    fields.push({
      path,
      type,
      ...(value === undefined ? {} : { defaultValue: value }),
      ...(meta?.mandatory === true || schema.get(key)?.required ? { mandatory: true } : {}),
      ...(sd ? { disclosable: true } : {}),
      ...(namespace === undefined ? {} : { namespace }),
      ...(Array.isArray(meta?.display) ? { display: meta.display as ClaimField['display'] } : {}),
    })
  }
  for (const [namespace, claims] of groups)
    for (const [path, value] of leaves(claims)) addField(namespace, path, typeOf(value), value)
  // Claims known only from the schema or the metadata have no default (an attribute provider gives them).
  const fallbackNamespace = groups[0]?.[0]
  for (const [key, info] of schema)
    if (!seen.has(key)) addField(fallbackNamespace, key.split('.'), info.type, undefined)
  for (const key of metadata.keys())
    if (!seen.has(key)) addField(fallbackNamespace, key.split('.'), 'string', undefined)

  const { namespace: _ns, claimsByNamespace: _cbn, claimsMetadata: _cm, ...keptConfig } = config
  const v2: Json = {
    ...Object.fromEntries(KEPT.filter((k) => k in v1).map((k) => [k, v1[k]])),
    id,
    config: keptConfig,
    fields,
  }

  if (typeof v1.keyId === 'string') {
    v2.keyChainId = v1.keyId
    changes.push(`keyId '${v1.keyId}' → keyChainId`)
  } else if (typeof v1.certId === 'string') {
    const chain = options.keyChainOfCert(v1.certId)
    v2.keyChainId = chain ?? v1.certId
    changes.push(`certId '${v1.certId}' → keyChainId '${String(v2.keyChainId)}'`)
  }
  const result: ConvertedCredential = { config: v2, changes }
  if (isObject(v1.claimsWebhook) && typeof v1.claimsWebhook.url === 'string') {
    const providerId = `${id}-claims`
    result.attributeProvider = {
      id: providerId,
      body: {
        url: v1.claimsWebhook.url,
        auth: endpointAuth(v1.claimsWebhook.auth, changes, 'claimsWebhook'),
      },
    }
    v2.attributeProviderId = providerId
    changes.push(`claimsWebhook → attribute-providers/${providerId}.json, attributeProviderId`)
  }
  if (isObject(v1.notificationWebhook) && typeof v1.notificationWebhook.url === 'string') {
    const endpointId = `${id}-notifications`
    result.webhookEndpoint = {
      id: endpointId,
      body: {
        url: v1.notificationWebhook.url,
        auth: endpointAuth(v1.notificationWebhook.auth, changes, 'notificationWebhook'),
      },
    }
    v2.webhookEndpointId = endpointId
    changes.push(`notificationWebhook → webhook-endpoints/${endpointId}.json, webhookEndpointId`)
  }
  const dropped = Object.keys(v1).filter((k) => !KEPT.includes(k) && !REMOVED.includes(k))
  if (dropped.length) changes.push(`dropped (no 5.0 equivalent): ${dropped.join(', ')}`)
  return result
}
