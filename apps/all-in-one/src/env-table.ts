import { zManagementEnv } from '@credential-service/management'
import { zCommonEnv } from '@credential-service/server-kit'
import { z } from 'zod'

/** All-in-one only: where generated dev secrets and the embedded database live. */
export const zAllInOneEnv = z.object({
  DATA_DIR: z
    .string()
    .default('.data')
    .describe(
      'All-in-one mode and operator commands: folder of the embedded database (pglite/) and of the dev-secrets.json only `npm start` writes',
    ),
})

/** Which processes read each variable. Issuer and verifier read the common set only. */
const COMMON = 'all'
// What management adds to the common set (zCommonEnv) only management reads.
const MANAGEMENT_ONLY = new Set(Object.keys(zManagementEnv.shape).filter((key) => !(key in zCommonEnv.shape)))
/** The wallet endpoints they limit are the issuer's and the verifier's. */
const readBy = (key: string) =>
  MANAGEMENT_ONLY.has(key)
    ? 'management'
    : key === 'DPOP_NONCE_REQUIRED'
      ? 'issuer'
      : key.startsWith('STATUS_LIST_CACHE_') || key === 'DC_API_SIGNED_CLIENT_ID_AUDIENCE'
        ? 'verifier'
        : key.startsWith('RATE_LIMIT_WALLET_')
          ? 'issuer, verifier'
          : COMMON

/** The default of a `.default()` schema (a `.describe()` keeps the ZodDefault), else undefined. */
function defaultOf(field: z.ZodType): unknown {
  return field instanceof z.ZodDefault ? field.def.defaultValue : undefined
}

/**
 * The README's table of environment variables, generated from the zod schemas the processes
 * parse at start-up, so the two cannot drift (a test compares them).
 */
export function renderEnvTable(): string {
  const rows = ['| Variable | Read by | Required | Default | Description |', '|---|---|---|---|---|']
  const add = (schema: z.ZodObject, readBy: (key: string) => string) => {
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
      properties: Record<string, { description?: string; default?: unknown }>
      required?: string[]
    }
    for (const [key, property] of Object.entries(json.properties)) {
      const field = schema.shape[key] as z.ZodType
      const required = json.required?.includes(key) && property.default === undefined ? 'yes' : 'no'
      // Codecs such as z.stringbool() leave `default` out of the input JSON Schema: read it off zod.
      const value = property.default ?? defaultOf(field)
      const fallback = value === undefined ? '' : `\`${String(value)}\``
      const description = field.description ?? property.description ?? ''
      rows.push(`| \`${key}\` | ${readBy(key)} | ${required} | ${fallback} | ${description} |`)
    }
  }
  add(zManagementEnv, readBy)
  add(zAllInOneEnv, () => 'all-in-one')
  return rows.join('\n')
}

if (process.argv[1]?.endsWith('env-table.ts')) console.log(renderEnvTable())
