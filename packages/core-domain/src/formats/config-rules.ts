import type { ValidationIssue } from '../errors'
import { allFormatSpecs, CREDENTIAL_FORMATS, type CredentialFormat, formatSpec } from './registry'

const isFormat = (value: unknown): value is CredentialFormat =>
  (CREDENTIAL_FORMATS as readonly unknown[]).includes(value)

/**
 * The type member of a configuration's `config` as sent, before its shape is parsed (spec §2.2):
 * the format's own member (`vct`, `docType`) is required, another format's refused. Checked on the
 * raw body so that these stay rule violations (422) with these messages, as before `config` was a
 * union; the union's parse then refuses nothing more here. An unknown format is the parser's.
 */
export function formatMemberIssues(body: unknown, prefix = 'body'): ValidationIssue[] {
  const config = (body as { config?: unknown } | null)?.config
  if (typeof config !== 'object' || config === null) return []
  const { format } = config as { format?: unknown }
  if (!isFormat(format)) return []
  const own = formatSpec(format)
  const at = (member: string) => (prefix ? `${prefix}.config.${member}` : `config.${member}`)
  const issues: ValidationIssue[] = []
  if (!(own.typeMember in config))
    issues.push({ path: at(own.typeMember), message: `${format} configurations need a ${own.typeMember}` })
  for (const other of allFormatSpecs())
    if (other.typeMember !== own.typeMember && other.typeMember in config)
      issues.push({
        path: at(other.typeMember),
        message: `${other.typeMember} applies to ${other.format} only`,
      })
  return issues
}
