import type { ValidationIssue } from '../errors'

/**
 * Member names an SD-JWT payload gives meaning to: `_sd` and `_sd_alg` (RFC 9901 §4.1, §4.2.4.1)
 * and `...` (array element digests, §4.2.4.2).
 */
export const SD_JWT_STRUCTURE_NAMES: readonly string[] = ['_sd', '_sd_alg', '...']

/**
 * Members named like SD-JWT structure anywhere in a claim value, one issue each (checklist S-129).
 * Signed inside a claim, `{"_sd": [digest]}` or `[{"...": digest}]` reads as issuer-signed
 * structure to an RFC 9901 §7.1 verifier: a holder who chose the digest could append a disclosure
 * of its own. So such values are refused for every format, mdoc included, where they mean nothing.
 */
export function sdJwtStructureIssues(value: unknown, path: string): ValidationIssue[] {
  if (Array.isArray(value))
    return value.flatMap((element, index) => sdJwtStructureIssues(element, `${path}.${index}`))
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([name, member]) => [
    ...(SD_JWT_STRUCTURE_NAMES.includes(name) ? [structureIssue(`${path}.${name}`, name)] : []),
    ...sdJwtStructureIssues(member, `${path}.${name}`),
  ])
}

export const structureIssue = (path: string, name: string): ValidationIssue => ({
  path,
  message: `'${name}' is an SD-JWT structure name (RFC 9901 §4.2); claims cannot use it`,
})
