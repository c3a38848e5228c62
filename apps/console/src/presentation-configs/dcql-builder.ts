import {
  type CredentialConfigInput,
  checkDcqlQuery,
  credentialTypeOf,
  type DcqlQuery,
  dcqlMetaOf,
  formatSpec,
  queriedTypes,
  zDcqlQuery,
} from '@credential-service/core-domain'

/** What the builder needs of a credential configuration. */
export type PickableConfig = Pick<CredentialConfigInput, 'id' | 'config' | 'fields' | 'keyBinding'>

/** A claim the builder offers for a configuration: its DCQL claims path pointer (OpenID4VP §7). */
export interface ClaimOption {
  /** `JSON.stringify(path)`, the checkbox value. */
  key: string
  path: string[]
  label: string
}

/**
 * One credential query as the builder holds it: the configuration it asks for, the ticked claims
 * (keys of {@link ClaimOption}), and for mdoc the claims the verifier intends to retain.
 */
export interface CredentialPick {
  queryId: string
  configId: string
  claims: string[]
  retain: string[]
  multiple: boolean
}

/**
 * The claims of a configuration as DCQL paths: the field path for SD-JWT VC; for mdoc exactly
 * `[namespace, element]` (OpenID4VP §7.2), the element being the field's first segment.
 */
export function claimOptions(config: PickableConfig): ClaimOption[] {
  const namespaced = formatSpec(config.config.format).namespacedFields
  const options = new Map<string, ClaimOption>()
  for (const field of config.fields) {
    const path = namespaced ? [field.namespace ?? '', field.path[0] ?? ''] : field.path
    const key = JSON.stringify(path)
    if (!options.has(key)) options.set(key, { key, path, label: path.join(namespaced ? ' / ' : '.') })
  }
  return [...options.values()]
}

/** A DCQL `meta` as the builder shows it: `vct_values [a, b]`, `doctype_value x`. */
export function metaText(meta: Record<string, unknown>): string {
  return Object.entries(meta)
    .map(([name, value]) => `${name} ${Array.isArray(value) ? `[${value.join(', ')}]` : String(value)}`)
    .join(', ')
}

/** A query id of a configuration id (DCQL ids: alphanumeric, `_`, `-`), unique among `taken`. */
export function queryIdFor(configId: string, taken: readonly string[]): string {
  const base = configId.replace(/[^A-Za-z0-9_-]/g, '_')
  let id = base
  for (let n = 2; taken.includes(id); n++) id = `${base}_${n}`
  return id
}

/**
 * The DCQL query (OpenID4VP 1.0 §6) of the builder's picks: `vct_values` for SD-JWT VC,
 * `doctype_value` and namespaced paths for mdoc. A configuration without key binding issues
 * credentials no holder key is bound to, so its query does not require holder binding (§6.1).
 * A pick of a configuration not in `configs` keeps an empty meta, which the schema refuses.
 */
export function buildDcql(picks: readonly CredentialPick[], configs: readonly PickableConfig[]): DcqlQuery {
  return {
    credentials: picks.map((pick) => {
      const config = configs.find((candidate) => candidate.id === pick.configId)
      const format = config?.config.format ?? 'dc+sd-jwt'
      const spec = formatSpec(format)
      const options = config ? claimOptions(config) : []
      const claims = options
        .filter((option) => pick.claims.includes(option.key))
        .map((option) => ({
          path: option.path,
          ...(spec.intentToRetain && pick.retain.includes(option.key) ? { intent_to_retain: true } : {}),
        }))
      const type = config ? credentialTypeOf(config.config) : ''
      const meta = dcqlMetaOf(format, type ? [type] : [])
      return {
        id: pick.queryId,
        format,
        ...(pick.multiple ? { multiple: true } : {}),
        meta,
        ...(config?.keyBinding === false ? { require_cryptographic_holder_binding: false } : {}),
        ...(claims.length ? { claims } : {}),
      }
    }),
  }
}

/**
 * The builder's picks of a DCQL query, when the builder can show it whole: every credential query
 * names a configuration of `configs` (by format and `vct` or `docType`), and uses nothing the
 * builder does not set (claim ids or values, claim sets, credential sets, trusted authorities).
 * Undefined otherwise: the query stays in the JSON editor, unchanged.
 */
export function picksOf(query: DcqlQuery, configs: readonly PickableConfig[]): CredentialPick[] | undefined {
  if (query.credential_sets) return undefined
  const picks: CredentialPick[] = []
  for (const credential of query.credentials) {
    if (credential.trusted_authorities || credential.claim_sets) return undefined
    const wanted = queriedTypes(credential) ?? []
    const config = configs.find(
      (candidate) =>
        candidate.config.format === credential.format &&
        wanted.length === 1 &&
        credentialTypeOf(candidate.config) === wanted[0],
    )
    if (!config) return undefined
    const keys = new Set(claimOptions(config).map((option) => option.key))
    const claims = credential.claims ?? []
    if (claims.some((claim) => claim.id !== undefined || claim.values !== undefined)) return undefined
    if (claims.some((claim) => !keys.has(JSON.stringify(claim.path)))) return undefined
    const pick: CredentialPick = {
      queryId: credential.id,
      configId: config.id,
      claims: claims.map((claim) => JSON.stringify(claim.path)),
      retain: claims.filter((claim) => claim.intent_to_retain).map((claim) => JSON.stringify(claim.path)),
      multiple: credential.multiple === true,
    }
    // Only what the builder would write again: anything else would be lost in a round trip.
    if (JSON.stringify(buildDcql([pick], configs).credentials[0]) !== JSON.stringify(credential))
      return undefined
    picks.push(pick)
  }
  return picks
}

/** A problem of the DCQL being typed, by path under `dcqlQuery` (empty: the text itself). */
export interface DcqlIssue {
  path: string
  message: string
}

export type DcqlCheck = { ok: true; query: DcqlQuery } | { ok: false; issues: DcqlIssue[] }

/**
 * Checks DCQL JSON as the API does: the schema (zDcqlQuery), then the cross-reference rules
 * (checkDcqlQuery, OpenID4VP §6–7). Paths are relative to the query (`credentials.0.meta`).
 */
export function checkDcqlText(text: string): DcqlCheck {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return { ok: false, issues: [{ path: '', message: `not valid JSON: ${(error as Error).message}` }] }
  }
  const parsed = zDcqlQuery.safeParse(json)
  if (!parsed.success)
    return {
      ok: false,
      issues: parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
    }
  const issues = checkDcqlQuery(parsed.data, 'dcqlQuery').map(({ path, message }) => ({
    path: path.replace(/^dcqlQuery\./, ''),
    message,
  }))
  return issues.length ? { ok: false, issues } : { ok: true, query: parsed.data }
}
