import { z } from 'zod'

/** A failed configuration parse: lists every offending variable by name. */
export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n${issues.map((issue) => `  - ${issue}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

const emptyAsUndefined = (value: unknown) => (value === '' ? undefined : value)

/** An optional variable where an empty string counts as unset (compose files often pass `VAR=`). */
export function optionalEnv<T extends z.ZodType>(schema: T) {
  return z.preprocess(emptyAsUndefined, schema.optional())
}

/** Variables every app reads. */
export const zCommonEnv = z.object({
  PUBLIC_URL: z
    .url({ error: 'PUBLIC_URL must be an absolute http(s) URL' })
    .transform((url) => url.replace(/\/+$/, ''))
    .describe('External base URL of the service, e.g. https://credentials.example.com (no trailing slash)'),
  MASTER_SECRET: z
    .string({ error: 'MASTER_SECRET is required' })
    .min(32, 'MASTER_SECRET must be at least 32 characters')
    .describe('Secret (≥ 32 characters) from which token-signing and key-encryption keys are derived'),
  DATABASE_URL: optionalEnv(z.string().describe('PostgreSQL connection string')).describe(
    'PostgreSQL connection string; required by the standalone apps. Unset in all-in-one mode: embedded PGlite',
  ),
  PGLITE_DATA_DIR: z
    .string()
    .default('.data/pglite')
    .describe('Folder of the embedded database when DATABASE_URL is unset (all-in-one: <DATA_DIR>/pglite)'),
  DATABASE_POOL_SIZE: z.coerce
    .number()
    .int()
    .min(1)
    .max(200)
    .default(10)
    .describe('PostgreSQL connections per process'),
  HOST: z
    .string()
    .default('0.0.0.0')
    .describe(
      'Interface to listen on. `npm start` (all-in-one dev entry) defaults to 127.0.0.1; the image sets 0.0.0.0',
    ),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000).describe('Port to listen on'),
  VAULT_ADDR: optionalEnv(z.url()).describe(
    'HashiCorp Vault address for `vault` key chains, e.g. https://vault:8200',
  ),
  VAULT_TOKEN: optionalEnv(z.string().min(1)).describe(
    'Vault token allowed to read and sign with the transit keys',
  ),
  VAULT_NAMESPACE: optionalEnv(z.string().min(1)).describe('Vault Enterprise namespace, if any'),
  VAULT_TRANSIT_MOUNT: z.string().default('transit').describe('Mount path of the Vault transit engine'),
  AWS_REGION: optionalEnv(z.string().min(1)).describe(
    'AWS region for `aws-kms` key chains; credentials come from the standard AWS variables, profile or role',
  ),
  AWS_ENDPOINT_URL_KMS: optionalEnv(z.url()).describe(
    'AWS KMS endpoint override (VPC endpoint or a local KMS)',
  ),
  OUTBOUND_ALLOW_HTTP: z
    .stringbool()
    .default(false)
    .describe('Development only: let attribute providers and webhooks use http:// URLs'),
  OUTBOUND_ALLOWED_HOSTS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((host) => host.trim())
        .filter(Boolean),
    )
    .describe(
      'Comma-separated hosts that attribute providers and webhooks may use although private or loopback',
    ),
  WEBHOOK_MAX_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(20)
    .default(4)
    .describe('Attempts to deliver one webhook event'),
  WEBHOOK_BACKOFF_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(600_000)
    .default(1000)
    .describe('Delay before the first webhook retry; doubled on each further retry'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('pino log level'),
})

/**
 * Parses the environment once. Errors name each variable, never its value (it may be a secret).
 */
export function parseEnv<T extends z.ZodType>(
  schema: T,
  env: Record<string, string | undefined>,
): Readonly<z.output<T>> {
  const result = schema.safeParse(env)
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => {
        const name = issue.path.join('.') || 'environment'
        return issue.message.includes(name) ? issue.message : `${name}: ${issue.message}`
      }),
    )
  }
  return Object.freeze(result.data) as Readonly<z.output<T>>
}
