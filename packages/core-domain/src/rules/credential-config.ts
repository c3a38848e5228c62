import type { ClaimField, CredentialConfigBody, FieldType } from '../contract/credential-config'
import type { ValidationIssue } from '../errors'
import { allFormatSpecs, formatSpec } from '../formats/registry'
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

const localeOf = (entry: { locale?: string; lang?: string }) =>
  (entry.locale ?? entry.lang ?? '').toLowerCase()

/**
 * Rules of a version 2 credential configuration beyond its shape: a namespace per field where the
 * format's fields have one (spec §2.3: mdoc), none elsewhere; the format's own rules of each field
 * (formats/<name>/spec.ts: for SD-JWT VC no field over a claim the issuer sets, §3.2.2.2); unique
 * claim paths, one display per locale (OpenID4VCI §12.2.4), default values of the declared type,
 * no claim that is both a leaf and a parent, no SD-JWT structure name in a path or default value
 * (RFC 9901 §4.2, checklist S-129), and no key attestation policy without key binding.
 */
export function checkCredentialConfig(config: CredentialConfigBody): ValidationIssue[] {
  const issues: ValidationIssue[] = []
  const add = (path: string, message: string) => issues.push({ path: `body.${path}`, message })
  const format = formatSpec(config.config.format)
  const namespaced = allFormatSpecs()
    .filter((spec) => spec.namespacedFields)
    .map((spec) => spec.format)
    .join(', ')
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
    if (format.namespacedFields && !field.namespace)
      add(`fields.${index}.namespace`, `${format.format} fields need a namespace`)
    if (!format.namespacedFields && field.namespace !== undefined)
      add(`fields.${index}.namespace`, `namespace applies to ${namespaced} fields only`)
    const key = JSON.stringify([field.namespace ?? '', ...field.path])
    if (seen.has(key)) add(`fields.${index}.path`, `the same claim as fields.${seen.get(key)}`)
    seen.set(key, index)
    for (const issue of format.fieldIssues(field)) add(`fields.${index}.${issue.path}`, issue.message)
    if (field.disclosable && !format.selectiveDisclosure)
      add(`fields.${index}.disclosable`, `${format.format} credentials have no selective disclosure`)
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
