import type { ClaimField, CredentialFormat, LoginClaimSource } from '../contract/credential-config'
import type { DcqlQuery } from '../contract/dcql'
import type { ValidationIssue } from '../errors'
import { queriedTypes } from '../formats/registry'
import { claimPath } from './claims-schema'

/**
 * Presentation during issuance: a credential configuration whose login provider is of kind
 * `presentation` fills its fields from the presented credential, by `userAuthentication.claims`
 * (field path → claims path in the presented credential).
 */
export type PresentedPath = (string | number | null)[]

/** A mapping value as a claims path (OpenID4VP 1.0 §7): a string is split at '.'. */
export const presentedPath = (source: LoginClaimSource): PresentedPath =>
  typeof source === 'string' ? source.split('.') : source

/** Whether `prefix` selects `path` or something that contains it (null and indexes match any element). */
function covers(prefix: PresentedPath, path: PresentedPath): boolean {
  if (prefix.length > path.length) return false
  return prefix.every((part, i) => part === null || path[i] === null || part === path[i])
}

type Query = DcqlQuery['credentials'][number]

/** The credential queries that make the wallet disclose `path` (a query without `claims` asks for all). */
export function queriesDisclosing(query: DcqlQuery, path: PresentedPath): Query[] {
  return query.credentials.filter((q) => !q.claims || q.claims.some((claim) => covers(claim.path, path)))
}

/** What a credential configuration of this tenant says a credential type holds. */
export interface KnownCredentialType {
  format: CredentialFormat
  /** Its type (`vct`, `docType`, …: credentialTypeOf). */
  type: string
  fields: ClaimField[]
}

/** The field at `path` of a known type, or undefined (or 'unknown' when the type is not issued here). */
function knownField(types: KnownCredentialType[], query: Query, path: PresentedPath) {
  const wanted = queriedTypes(query) ?? []
  const type = types.find((t) => t.format === query.format && wanted.includes(t.type))
  if (!type) return 'unknown' as const
  return type.fields.find((f) => {
    const fieldPath = claimPath(f)
    return fieldPath.length === path.length && fieldPath.every((part, i) => part === path[i])
  })
}

/**
 * Save-time checks of a presentation login's mapping: each source path must be one the
 * presentation configuration's DCQL query asks for (else the wallet never discloses it), and, when
 * the tenant issues that credential type itself, a claim of it with the target field's type.
 */
export function presentedClaimIssues(
  mapping: Record<string, LoginClaimSource>,
  targetFields: ClaimField[],
  presentation: { id: string; dcqlQuery: DcqlQuery },
  knownTypes: KnownCredentialType[],
  prefix: string,
): ValidationIssue[] {
  const issues: ValidationIssue[] = []
  for (const [key, source] of Object.entries(mapping)) {
    const path = presentedPath(source)
    const at = `${prefix}.userAuthentication.claims.${key}`
    const queries = queriesDisclosing(presentation.dcqlQuery, path)
    if (!queries.length) {
      issues.push({
        path: at,
        message: `${JSON.stringify(path)} is not asked for by the DCQL query of presentation configuration '${presentation.id}'`,
      })
      continue
    }
    const target = targetFields.find((f) => claimPath(f).join('.') === key)
    const found = queries.map((q) => knownField(knownTypes, q, path))
    if (found.includes('unknown') || !target) continue
    const fields = found.filter((f): f is ClaimField => f !== undefined && f !== 'unknown')
    if (!fields.length)
      issues.push({
        path: at,
        message: `the presented credential type has no claim at ${JSON.stringify(path)}`,
      })
    else if (!fields.some((f) => f.type === target.type))
      issues.push({
        path: at,
        message: `the presented claim is of type ${fields[0]?.type}, the field of type ${target.type}`,
      })
  }
  return issues
}

/**
 * The claims of a configuration taken from a verified presentation (claims per credential query
 * id): each mapped field gets the value its path selects in the first presented credential that
 * has it. A path selecting several values (null in it) gives the array of them.
 */
export function mapPresentedClaims(
  fields: ClaimField[],
  mapping: Record<string, LoginClaimSource>,
  presented: Record<string, Record<string, unknown>[]>,
  select: (root: unknown, path: PresentedPath) => unknown[] | undefined,
): Record<string, unknown> {
  const claims: Record<string, unknown> = {}
  const credentials = Object.values(presented).flat()
  for (const field of fields) {
    const target = claimPath(field)
    const source = mapping[target.join('.')]
    if (source === undefined) continue
    const path = presentedPath(source)
    for (const credential of credentials) {
      const selected = select(credential, path)
      if (selected === undefined) continue
      setAt(claims, target, path.includes(null) ? selected : selected[0])
      break
    }
  }
  return claims
}

function setAt(target: Record<string, unknown>, path: string[], value: unknown) {
  let node = target
  for (const key of path.slice(0, -1)) {
    const next = node[key]
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {}
    node = node[key] as Record<string, unknown>
  }
  node[path[path.length - 1] as string] = value
}
