import type { ValidationIssue } from '../errors'

/** Fields of earlier versions that 5.0 refuses, and what replaced each (spec §2.1–2.4, §9). */
const REMOVED_TOP_LEVEL: Record<string, string> = {
  claims: 'removed in 5.0: give each claim as fields[].defaultValue',
  disclosureFrame: 'removed in 5.0: mark claims with fields[].disclosable',
  schema: 'removed in 5.0: the schema is derived from fields[]',
  claimsWebhook: 'removed in 4.0: use attributeProviderId',
  notificationWebhook: 'removed in 4.0: use webhookEndpointId',
  keyId: 'removed in 4.0: use keyChainId',
  certId: 'removed in 4.0: use keyChainId',
}

const REMOVED_IN_CONFIG: Record<string, string> = {
  namespace: 'removed in 5.0: give each mdoc field its own fields[].namespace',
  claimsByNamespace: 'removed in 5.0: one fields[] entry per claim, with namespace and defaultValue',
  claimsMetadata: 'removed in 5.0: use fields[].display and fields[].mandatory',
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Names each field of a version 1 (or 3.x) credential configuration with its replacement.
 * Empty for a version 2 configuration. `prefix` is prepended to paths (`body`, a file name…).
 */
export function findRemovedCredentialFields(input: unknown, prefix = 'body'): ValidationIssue[] {
  if (!isObject(input)) return []
  const issues: ValidationIssue[] = []
  for (const [field, message] of Object.entries(REMOVED_TOP_LEVEL)) {
    if (field in input) issues.push({ path: `${prefix}.${field}`, message: `'${field}' was ${message}` })
  }
  if (isObject(input.config)) {
    for (const [field, message] of Object.entries(REMOVED_IN_CONFIG)) {
      if (field in input.config)
        issues.push({ path: `${prefix}.config.${field}`, message: `'config.${field}' was ${message}` })
    }
  }
  return issues
}

/** Key chain fields of 3.x that 4.0 replaced. */
export function findRemovedKeyChainFields(input: unknown, prefix = 'body'): ValidationIssue[] {
  if (!isObject(input)) return []
  return ['keyId', 'certId']
    .filter((field) => field in input)
    .map((field) => ({ path: `${prefix}.${field}`, message: `'${field}' was ${REMOVED_TOP_LEVEL[field]}` }))
}
