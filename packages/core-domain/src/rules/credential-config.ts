import type { ClaimField, CredentialConfigBody, FieldType } from '../contract/credential-config'
import type { ValidationIssue } from '../errors'
import { claimPath } from './claims-schema'
import { SD_JWT_STRUCTURE_NAMES, sdJwtStructureIssues, structureIssue } from './sd-jwt-names'

function valueMatches(type: FieldType, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
    case 'integer':
      return Number.isInteger(value)
    case 'boolean':
      return typeof value === 'boolean'
    case 'date':
      return (
        typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value))
      )
    case 'date-time':
      return typeof value === 'string' && !Number.isNaN(Date.parse(value)) && /T/.test(value)
    case 'array':
      return Array.isArray(value)
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value)
  }
}

export { valueMatches }

/**
 * Claims the issuer sets that SD-JWT VC §3.2.2.2 (checklist F-03) forbids disclosing selectively:
 * a disclosable field at or under one of them is refused at configuration time.
 */
export const NON_DISCLOSABLE_CLAIMS = ['iss', 'nbf', 'exp', 'cnf', 'vct', 'vct#integrity', 'status'] as const

/**
 * Claims the issuer writes into every SD-JWT VC itself: a field of that name would be silently
 * replaced at issuance, so it is refused at configuration time whether disclosable or not.
 */
export const ISSUER_SET_CLAIMS = ['iss', 'iat', 'exp', 'cnf', 'vct', 'vct#integrity', 'status'] as const

const localeOf = (entry: { locale?: string; lang?: string }) =>
  (entry.locale ?? entry.lang ?? '').toLowerCase()

/**
 * Rules of a version 2 credential configuration beyond its shape: format-specific members
 * (spec §2.2–2.3: `docType` and a namespace per field for mdoc, `vct` and no namespace for SD-JWT),
 * unique claim paths, one display per locale (OpenID4VCI §12.2.4), default values of the declared type,
 * no claim that is both a leaf and a parent, no disclosable registered claim (SD-JWT VC §3.2.2.2),
 * no field over a claim the issuer sets itself, no SD-JWT structure name in a path or default value
 * (RFC 9901 §4.2, checklist S-129), and no key attestation policy without key binding.
 */
export function checkCredentialConfig(config: CredentialConfigBody): ValidationIssue[] {
  const issues: ValidationIssue[] = []
  const add = (path: string, message: string) => issues.push({ path: `body.${path}`, message })
  const mdoc = config.config.format === 'mso_mdoc'
  if (mdoc && !config.config.docType) add('config.docType', 'mso_mdoc configurations need a docType')
  if (mdoc && config.config.vct) add('config.vct', 'vct applies to dc+sd-jwt only')
  if (!mdoc && !config.config.vct) add('config.vct', 'dc+sd-jwt configurations need a vct')
  if (!mdoc && config.config.docType) add('config.docType', 'docType applies to mso_mdoc only')
  // Key attestations come with proofs (OpenID4VCI Appendix D): without key binding none are asked for.
  if (config.keyAttestation && !config.keyBinding)
    add('keyAttestation', 'key attestations are checked on proofs; they need keyBinding: true')

  const locales = new Set<string>()
  config.config.display?.forEach((entry, index) => {
    if (locales.has(localeOf(entry)))
      add(`config.display.${index}.locale`, `a second display for locale '${entry.locale}'`)
    locales.add(localeOf(entry))
  })

  const seen = new Map<string, number>()
  config.fields.forEach((field: ClaimField, index) => {
    if (mdoc && !field.namespace) add(`fields.${index}.namespace`, 'mso_mdoc fields need a namespace')
    if (!mdoc && field.namespace !== undefined)
      add(`fields.${index}.namespace`, 'namespace applies to mso_mdoc fields only')
    const key = JSON.stringify([field.namespace ?? '', ...field.path])
    if (seen.has(key)) add(`fields.${index}.path`, `the same claim as fields.${seen.get(key)}`)
    seen.set(key, index)
    const top = field.path[0] as string
    if (!mdoc && field.disclosable && (NON_DISCLOSABLE_CLAIMS as readonly string[]).includes(top)) {
      add(`fields.${index}.disclosable`, `'${top}' must not be selectively disclosable (SD-JWT VC §3.2.2.2)`)
    } else if (!mdoc && (ISSUER_SET_CLAIMS as readonly string[]).includes(top)) {
      add(`fields.${index}.path`, `'${top}' is set by the issuer in every credential; it cannot be a field`)
    }
    for (const name of claimPath(field).filter((part) => SD_JWT_STRUCTURE_NAMES.includes(part)))
      issues.push(structureIssue(`body.fields.${index}.path`, name))
    issues.push(...sdJwtStructureIssues(field.defaultValue, `body.fields.${index}.defaultValue`))
    if (field.defaultValue !== undefined && !valueMatches(field.type, field.defaultValue)) {
      add(`fields.${index}.defaultValue`, `not a value of type '${field.type}'`)
    }
    const fieldLocales = new Set<string>()
    field.display?.forEach((entry, displayIndex) => {
      const locale = localeOf(entry)
      if (fieldLocales.has(locale))
        add(`fields.${index}.display.${displayIndex}`, `a second label for locale '${locale}'`)
      fieldLocales.add(locale)
    })
  })
  // A claim cannot be a leaf and hold children at once (["address"] and ["address", "street"]).
  const keys = [...seen.keys()].map((key) => JSON.parse(key) as string[])
  keys.forEach((parent) => {
    const child = keys.find(
      (other) => other.length > parent.length && parent.every((part, i) => other[i] === part),
    )
    if (child)
      add(
        `fields.${seen.get(JSON.stringify(parent))}.path`,
        `is also the parent of ${JSON.stringify(child.slice(1))}`,
      )
  })
  return issues
}
