import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

/** One problem of an import, located by file (relative to the import folder) and field path. */
export interface ImportIssue {
  file: string
  path: string
  message: string
}

/** Resource folders of a tenant, in the order they are applied (a folder may reference the ones before it). */
export const RESOURCE_KINDS = [
  'key-chains',
  'attribute-providers',
  'webhook-endpoints',
  'login-providers',
  'trust-lists',
  'wallet-providers',
  'credentials',
  'presentations',
  'auth-servers',
  'federation',
  'clients',
] as const
export type ResourceKind = (typeof RESOURCE_KINDS)[number]

/** The 3.x layout (spec §9.1): replaced by `key-chains/` in 4.0. */
const LEGACY_FOLDERS = ['keys', 'certs']

export interface ConfigFile {
  /** Relative to the import folder, e.g. `acme/credentials/pid.json`. */
  file: string
  /** Id from the file name (`pid` for `pid.json`). */
  name: string
  json: Record<string, unknown>
}

export interface TenantFolder {
  tenant: string
  /** `tenant.json` as read; checked against the tenant settings by validateTenantFolder. */
  settings: ConfigFile | undefined
  files: Record<ResourceKind, ConfigFile[]>
}

export interface ConfigTree {
  tenants: TenantFolder[]
  /** Problems found while reading, per tenant folder name. */
  issues: Map<string, ImportIssue[]>
}

const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g

/**
 * Replaces `${VAR}` and `${VAR:default}` with environment values. Placeholders stand inside JSON
 * strings, so values are JSON-escaped; a variable that is unset and has no default is an issue.
 */
export function substitutePlaceholders(
  text: string,
  env: Record<string, string | undefined>,
  file: string,
): { text: string; issues: ImportIssue[] } {
  const issues: ImportIssue[] = []
  const replaced = text.replace(PLACEHOLDER, (_match, name: string, fallback: string | undefined) => {
    const value = env[name] ?? fallback
    if (value === undefined) {
      issues.push({ file, path: '', message: `\${${name}} is not set and has no default` })
      return ''
    }
    return JSON.stringify(value).slice(1, -1)
  })
  return { text: replaced, issues }
}

function readJson(
  root: string,
  path: string,
  env: Record<string, string | undefined>,
  issues: ImportIssue[],
) {
  const file = relative(root, path)
  const substituted = substitutePlaceholders(readFileSync(path, 'utf8'), env, file)
  issues.push(...substituted.issues)
  try {
    const json = JSON.parse(substituted.text) as unknown
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      issues.push({ file, path: '', message: 'a configuration file holds one JSON object' })
      return undefined
    }
    return json as Record<string, unknown>
  } catch (error) {
    issues.push({ file, path: '', message: `not valid JSON: ${(error as Error).message}` })
    return undefined
  }
}

const folders = (path: string) =>
  readdirSync(path)
    .filter((name) => statSync(join(path, name)).isDirectory())
    .sort()

/** Reads `<dir>/<tenant>/<kind>/*.json`; never writes anything. */
export function readConfigDir(dir: string, env: Record<string, string | undefined>): ConfigTree {
  if (!existsSync(dir)) throw new Error(`CONFIG_IMPORT_DIR '${dir}' does not exist`)
  const tree: ConfigTree = { tenants: [], issues: new Map() }
  for (const tenant of folders(dir)) {
    const issues: ImportIssue[] = []
    const tenantPath = join(dir, tenant)
    const folder: TenantFolder = {
      tenant,
      settings: undefined,
      files: Object.fromEntries(RESOURCE_KINDS.map((kind) => [kind, []])) as unknown as TenantFolder['files'],
    }
    if (existsSync(join(tenantPath, 'tenant.json'))) {
      const json = readJson(dir, join(tenantPath, 'tenant.json'), env, issues)
      if (json) folder.settings = { file: join(tenant, 'tenant.json'), name: tenant, json }
    }
    for (const sub of folders(tenantPath)) {
      const subPath = join(tenantPath, sub)
      if (LEGACY_FOLDERS.includes(sub)) {
        issues.push({
          file: relative(dir, subPath),
          path: '',
          message: `the 3.x '${sub}/' folder was merged into 'key-chains/' in 4.0; convert it with config:migrate`,
        })
        continue
      }
      if (!(RESOURCE_KINDS as readonly string[]).includes(sub)) {
        issues.push({
          file: relative(dir, subPath),
          path: '',
          message: `unknown folder; expected one of ${RESOURCE_KINDS.join(', ')}`,
        })
        continue
      }
      for (const name of readdirSync(subPath)
        .filter((f) => f.endsWith('.json'))
        .sort()) {
        const json = readJson(dir, join(subPath, name), env, issues)
        if (json)
          folder.files[sub as ResourceKind].push({
            file: relative(dir, join(subPath, name)),
            name: name.slice(0, -5),
            json,
          })
      }
    }
    tree.tenants.push(folder)
    tree.issues.set(tenant, issues)
  }
  return tree
}
