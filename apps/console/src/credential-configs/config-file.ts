import {
  type CredentialConfigInput,
  findRemovedCredentialFields,
  formatMemberIssues,
  zCredentialConfigInput,
} from '@credential-service/core-domain'

/** A problem of an imported file, by field path (empty: the file as a whole). */
export interface FileIssue {
  path: string
  message: string
}

export type ReadConfigFileResult =
  | { ok: true; config: CredentialConfigInput }
  | { ok: false; issues: FileIssue[] }

/** `${VAR}` and `${VAR:default}`: substituted by `config:import` from its environment, not here. */
const PLACEHOLDER = /\$\{[A-Za-z_][A-Za-z0-9_]*(?::[^}]*)?\}/

/**
 * Reads a `credentials/<id>.json` file of a config-import folder (docs/configuration-import.md,
 * apps/management/src/config-import): the id defaults to the file name and must match it when
 * given; version 1 members are named with their replacement; the rest is checked with the API's
 * schema. Placeholders are refused: only the import command knows their values.
 */
export function readConfigFile(text: string, fileName: string): ReadConfigFileResult {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return { ok: false, issues: [{ path: '', message: `not valid JSON: ${(error as Error).message}` }] }
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return { ok: false, issues: [{ path: '', message: 'a configuration file holds one JSON object' }] }
  if (PLACEHOLDER.test(text))
    return {
      ok: false,
      issues: [
        {
          path: '',
          message:
            'the file has ${VAR} placeholders, which only config:import fills from its environment; replace them first',
        },
      ],
    }
  const name = fileName.replace(/\.json$/i, '')
  const body = { id: name, ...(json as Record<string, unknown>) }
  if (body.id !== name)
    return {
      ok: false,
      issues: [{ path: 'id', message: `'${String(body.id)}' differs from the file name '${name}'` }],
    }
  const removed = findRemovedCredentialFields(body)
  if (removed.length)
    return {
      ok: false,
      issues: removed.map(({ path, message }) => ({ path: path.replace(/^body\.?/, ''), message })),
    }
  // The format's type member (vct, docType), named as the API names it.
  const members = formatMemberIssues(body)
  if (members.length)
    return {
      ok: false,
      issues: members.map(({ path, message }) => ({ path: path.replace(/^body\.?/, ''), message })),
    }
  const parsed = zCredentialConfigInput.safeParse(body)
  if (!parsed.success)
    return {
      ok: false,
      issues: parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
    }
  return { ok: true, config: parsed.data }
}

/**
 * A configuration as a config-import file: the definition without the stored timestamps, so
 * `config:import` (and this editor's import) reads it back as it was. Saved as `<id>.json`.
 */
export function configFile(config: CredentialConfigInput & { createdAt?: string; updatedAt?: string }): {
  fileName: string
  text: string
} {
  const { createdAt: _created, updatedAt: _updated, ...definition } = config
  return { fileName: `${config.id}.json`, text: `${JSON.stringify(definition, null, 2)}\n` }
}
