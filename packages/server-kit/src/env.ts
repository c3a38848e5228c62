import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
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

/**
 * A secret named rather than given, so that the variable listing, a compose file or a pod spec
 * never shows it: `env:NAME` (the value of another variable) or `file:/path` (a mounted secret).
 * `parseEnv` reads it once and replaces the reference with the secret.
 */
export const zSecretReference = z
  .string()
  .regex(/^(env:[A-Za-z_][A-Za-z0-9_]*|file:.+)$/, 'must be a secret reference: env:NAME or file:/path')

/** Variables holding a secret reference (zSecretReference), resolved by parseEnv. */
const SECRET_REFERENCES = ['PKCS11_PIN', 'GCP_KMS_CREDENTIALS'] as const

/** The secret a reference names; the error names the variable and the reference, never a value. */
function resolveSecretReference(
  variable: string,
  reference: string,
  env: Record<string, string | undefined>,
): string {
  if (reference.startsWith('env:')) {
    const value = env[reference.slice(4)]
    if (!value) throw new ConfigError([`${variable}: ${reference} names a variable that is not set`])
    return value
  }
  try {
    // A mounted secret file usually ends with a newline that is not part of the secret.
    const value = readFileSync(reference.slice(5), 'utf8').replace(/\r?\n$/, '')
    if (!value) throw new Error('empty')
    return value
  } catch {
    throw new ConfigError([`${variable}: ${reference} cannot be read or is empty`])
  }
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
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(10_000)
    .describe(
      'PostgreSQL statement_timeout: a longer statement is cancelled and the request answers 503 (migrations are exempt)',
    ),
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(60_000)
    .default(3000)
    .describe(
      'Longest wait to open a PostgreSQL connection or get a pooled one; then the request answers 503',
    ),
  DATABASE_STARTUP_TIMEOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(3600)
    .default(60)
    .describe(
      'At start, how long a process retries (with backoff) a PostgreSQL server it cannot reach before it exits 1',
    ),
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
  AZURE_KEY_VAULT_URL: optionalEnv(z.url()).describe(
    'Azure Key Vault for `azure-key-vault` key chains, e.g. https://acme-issuer.vault.azure.net; keys are read from it only',
  ),
  AZURE_TENANT_ID: optionalEnv(z.string().min(1)).describe(
    'Microsoft Entra tenant of the service principal that signs with the Azure Key Vault keys',
  ),
  AZURE_CLIENT_ID: optionalEnv(z.string().min(1)).describe(
    'Application (client) id of that service principal',
  ),
  AZURE_CLIENT_SECRET: optionalEnv(z.string().min(1)).describe('Client secret of that service principal'),
  AZURE_AUTHORITY_HOST: z
    .url()
    .default('https://login.microsoftonline.com')
    .describe('Microsoft Entra token authority (another for sovereign clouds)'),
  AZURE_KEY_VAULT_KEY_TYPE: z
    .enum(['EC-HSM', 'EC'])
    .default('EC-HSM')
    .describe(
      'Keys generated in or imported into Azure Key Vault (`source: generate` / `import`): `EC-HSM` (HSM-protected, a Premium vault) or `EC` (software-protected); neither is exportable',
    ),
  GCP_KMS_CREDENTIALS: optionalEnv(zSecretReference).describe(
    'Where the Google service account key (JSON) for `gcp-kms` key chains is: `file:/path` or `env:NAME`, read at start; never stored or logged',
  ),
  GCP_KMS_ENDPOINT: z
    .url()
    .default('https://cloudkms.googleapis.com')
    .describe('Cloud KMS endpoint (a regional or private one)'),
  GCP_KMS_KEY_RING: optionalEnv(
    z
      .string()
      .regex(/^projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+$/, 'projects/…/locations/…/keyRings/…'),
  ).describe(
    'Key ring where `gcp-kms` key chains generated or imported by the service (`source: generate` / `import`) get their keys (HSM protection level; imports through an import job), `projects/P/locations/L/keyRings/R`; without it, gcp-kms keys are made in Cloud KMS and registered',
  ),
  PKCS11_MODULE: optionalEnv(z.string().min(1)).describe(
    'Path of the HSM vendor’s PKCS#11 module (shared library) for `pkcs11` key chains, e.g. /usr/lib/softhsm/libsofthsm2.so',
  ),
  PKCS11_TOKEN_LABEL: optionalEnv(z.string().min(1)).describe(
    'Label of the PKCS#11 token that holds the keys (its slot is found by it); required with PKCS11_MODULE',
  ),
  PKCS11_PIN: optionalEnv(zSecretReference).describe(
    'Where the PKCS#11 token user’s PIN is: `env:NAME` (another variable) or `file:/path` (a mounted secret), read at start; required with PKCS11_MODULE. The PIN is never stored or logged',
  ),
  PKCS11_SESSIONS: z.coerce
    .number()
    .int()
    .min(1)
    .max(256)
    .default(4)
    .describe('PKCS#11 sessions per process: signatures made at once; further ones wait for a free session'),
  OUTBOUND_ALLOW_HTTP: z
    .stringbool()
    .default(false)
    .describe(
      'Development only: let attribute providers, webhooks, status lists, login providers (discovery, token, JWKS, userinfo) and presentation redirect URIs use http:// URLs',
    ),
  DC_API_SIGNED_CLIENT_ID_AUDIENCE: z
    .stringbool()
    .default(false)
    .describe(
      'Compatibility: also accept a signed Digital Credentials API answer whose SD-JWT key binding `aud` is the client id, as some wallets send; OpenID4VP 1.0 A.4 makes it `origin:<origin>` even for signed requests, which is always accepted',
    ),
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
      'Comma-separated host names or IP addresses the service may call although they are (or resolve to) private, loopback or link-local addresses',
    ),
  OUTBOUND_MAX_RESPONSE_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(100 * 1024 * 1024)
    .default(256 * 1024)
    .describe(
      'Largest answer read from an attribute provider, a status list or a login provider (discovery, token, JWKS, userinfo); a longer one is cut off and the call fails',
    ),
  STATUS_LIST_CACHE_MAX_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(86_400)
    .default(300)
    .describe(
      'Longest the verifier uses a fetched status list without asking its server again; shorter when the token’s `ttl`, the answer’s Cache-Control max-age or the token’s `exp` says so, and revalidated with its ETag. 0 turns the cache off: every presentation fetches the list',
    ),
  STATUS_LIST_CACHE_STALE_IF_ERROR_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(86_400)
    .default(300)
    .describe(
      'How long past its lifetime a cached status list still answers while its server times out, cannot be reached or answers 5xx, 408 or 429 (never past the token’s `exp`, nor after `no-cache` or `must-revalidate`); without such a list the wallet gets 503 `temporarily_unavailable` with `Retry-After` and the session stays pending. 0: never',
    ),
  STATUS_LIST_CACHE_MAX_ENTRIES: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(1000)
    .describe('Status lists the verifier keeps per process; the least recently used one goes first'),
  STATUS_LIST_CACHE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(4 * 1024 * 1024 * 1024)
    .default(64 * 1024 * 1024)
    .describe(
      'Bytes of inflated status lists the verifier keeps per process (a list is at most 16 MiB inflated); the least recently used go first, and a larger list is used once and not kept',
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
    .describe('Delay before the first webhook retry; doubled on each further retry (at most one hour)'),
  WEBHOOK_POLL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(5)
    .describe(
      'How often each issuer and verifier process looks for due webhook deliveries in the outbox (new events and due retries are also sent at once)',
    ),
  TRUST_LIST_REFRESH_CHECK_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(60)
    .describe(
      'How often each issuer, verifier and management process looks for fetched trust lists (ETSI TS 119 612) whose refresh is due; each list is fetched by one process per refreshSeconds',
    ),
  TRUST_LIST_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .max(256 * 1024 * 1024)
    .default(8 * 1024 * 1024)
    .describe(
      'Largest fetched trust list (ETSI TS 119 612 XML or TS 119 602 JWS, and each list a list of lists points to), read as it streams in; a longer one fails the refresh. National trusted lists run to several MB',
    ),
  TRUST_LIST_CHECK_TIMEOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(600)
    .default(60)
    .describe(
      'Longest one fetched trust list may take to parse and check (in a worker thread, one list at a time); past it the worker is stopped and the refresh fails',
    ),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(100 * 1024 * 1024)
    .default(1024 * 1024)
    .describe(
      'Largest request body in bytes; larger is a 413 problem. A proxy in front must allow more (nginx client_max_body_size)',
    ),
  HEADER_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(4096)
    .max(1024 * 1024)
    .default(16 * 1024)
    .describe(
      'Largest request line plus headers in bytes; larger is a 431 problem (node:http maxHeaderSize)',
    ),
  URL_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024)
    .default(8 * 1024)
    .describe(
      'Longest request URI (path and query) in bytes; longer is a 414 problem. Keep it below HEADER_LIMIT_BYTES',
    ),
  TRUST_PROXY: z
    .string()
    .default('loopback,linklocal,uniquelocal')
    .transform(parseTrustProxy)
    .describe(
      'Proxies whose X-Forwarded-For is believed for the client IP (rate limits): comma-separated addresses, CIDRs or `loopback`, `linklocal`, `uniquelocal` (private networks, where ingresses run); `false` uses the socket address; `true` believes any hop and lets clients pick their IP',
    ),
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform(parseOrigins)
    .describe(
      'Browser origins allowed to call the service across origins (CORS), exact and comma-separated, e.g. `https://admin.example.com,https://wallet.example.com`; none by default. Applies to /api and the wallet-facing endpoints',
    ),
  RATE_LIMIT_STORE: z
    .enum(['memory', 'postgres'])
    .optional()
    .describe(
      'Where rate-limit counters live: `postgres` (the service database, shared by every process, first hits counted in batches within 100 ms; the default with DATABASE_URL) or `memory` (per process, so N replicas allow N times each limit; the default on the embedded database)',
    ),
  RATE_LIMIT_WALLET_PER_MINUTE: perMinute(300).describe(
    'Requests per minute from one client IP to each wallet endpoint (issuer: token, nonce, attestation challenge, offer by reference, PAR, authorize, credential, deferred credential, notification; authorize/callback counts with authorize; verifier: response, where the Digital Credentials API answer counts with direct_post), then 429; 0 turns the limit off',
  ),
  RATE_LIMIT_WALLET_TENANT_PER_MINUTE: perMinute(0).describe(
    'Requests per minute to each wallet endpoint of one tenant from all IPs together, then 429; 0 (default) sets no tenant limit',
  ),
  DPOP_NONCE_REQUIRED: z
    .stringbool()
    .default(true)
    .describe(
      'Require a server nonce (RFC 9449 §8) in every DPoP proof: a proof without a fresh one answers use_dpop_nonce with a DPoP-Nonce header',
    ),
  METRICS_TENANT_LABEL_LIMIT: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(100)
    .describe(
      'Tenants that get a `tenant` label value of their own in /api/metrics (per process, first come); the rest count as `_other`',
    ),
  SHUTDOWN_DRAIN_SECONDS: z.coerce
    .number()
    .min(0)
    .max(300)
    .default(5)
    .describe(
      'On SIGTERM, how long the process keeps serving while /readyz answers 503, so that balancers (Kubernetes endpoints) stop sending it requests; then it stops accepting, finishes in-flight requests (at most 10 s) and exits 0. SIGINT (Ctrl-C) skips the drain',
    ),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('pino log level'),
  LOG_FORMAT: z
    .enum(['auto', 'json', 'pretty'])
    .default('auto')
    .describe(
      'Log lines as JSON (one object per line, for collectors) or pretty (readable, coloured); auto: pretty when stdout is a terminal, JSON otherwise',
    ),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalEnv(z.url()).describe(
    'OpenTelemetry: base URL of an OTLP/HTTP receiver (a collector), e.g. http://otel-collector:4318; traces go to `<url>/v1/traces`, metrics to `<url>/v1/metrics`. Unset: no tracing, nothing loaded (docs/tracing.md)',
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalEnv(z.url()).describe(
    'OpenTelemetry: full URL for traces only (e.g. http://otel-collector:4318/v1/traces); turns tracing on without metrics when OTEL_EXPORTER_OTLP_ENDPOINT is unset',
  ),
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: optionalEnv(z.url()).describe(
    'OpenTelemetry: full URL for metrics, overriding `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/metrics`; metrics are exported only while tracing is on',
  ),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .enum(['http/protobuf', 'http/json'], {
      error: 'OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf or http/json (OTLP over gRPC is not supported)',
    })
    .default('http/protobuf')
    .describe(
      'OpenTelemetry: the OTLP/HTTP encoding, http/protobuf (the OpenTelemetry default) or http/json; grpc is refused at start',
    ),
  OTEL_EXPORTER_OTLP_HEADERS: optionalEnv(z.string()).describe(
    'OpenTelemetry: headers sent with each export, `key=value` comma-separated (e.g. an API key of a hosted backend; never logged)',
  ),
  OTEL_SERVICE_NAME: optionalEnv(z.string().min(1)).describe(
    'OpenTelemetry service.name; default credential-service-<app> (issuer, verifier, management, all-in-one)',
  ),
  OTEL_RESOURCE_ATTRIBUTES: optionalEnv(z.string()).describe(
    'OpenTelemetry resource attributes, `key=value` comma-separated, e.g. deployment.environment.name=prod',
  ),
  OTEL_TRACES_SAMPLER: optionalEnv(
    z.enum([
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ]),
  ).describe('OpenTelemetry sampler; default parentbased_always_on (follows the caller’s sampled flag)'),
  OTEL_TRACES_SAMPLER_ARG: optionalEnv(z.coerce.number().min(0).max(1)).describe(
    'OpenTelemetry sampler argument: the ratio of traces kept by the traceidratio samplers (default 1)',
  ),
  OTEL_METRIC_EXPORT_INTERVAL: z.coerce
    .number()
    .int()
    .min(1000)
    .max(3_600_000)
    .default(60_000)
    .describe('OpenTelemetry: milliseconds between two metric exports'),
  OTEL_SDK_DISABLED: z
    .stringbool()
    .default(false)
    .describe('OpenTelemetry: true turns tracing and OTLP metrics off even with an endpoint set'),
})

/** A rate limit variable: requests per minute, 0 for none. */
export function perMinute(fallback: number) {
  return z.coerce.number().int().min(0).max(1_000_000_000).default(fallback)
}

const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/** CORS_ORIGINS: each entry an exact `scheme://host[:port]` origin (no path, no wildcard). */
function parseOrigins(value: string, ctx: z.RefinementCtx): string[] {
  const origins = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
  for (const origin of origins) {
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {}
    if (
      !parsed ||
      !['http:', 'https:'].includes(parsed.protocol) ||
      parsed.origin !== origin ||
      origin.includes('*')
    )
      ctx.addIssue({
        code: 'custom',
        message: `CORS_ORIGINS: '${origin}' is not an origin (scheme://host[:port], nothing after it, no wildcard)`,
      })
  }
  return origins
}

/**
 * TRUST_PROXY as Fastify's `trustProxy` takes it; a bad entry is a configuration error. No hop
 * counts: Fastify 5 trusts no proxy for a number, as a count cannot tell a proxy from a client.
 */
function parseTrustProxy(value: string, ctx: z.RefinementCtx): boolean | string[] {
  const text = value.trim()
  if (text === 'true' || text === 'false') return text === 'true'
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
  const bad = entries.filter((entry) => {
    const [address, prefix, ...rest] = entry.split('/')
    const family = isIP(address ?? '')
    if (PROXY_RANGE_NAMES.has(entry)) return false
    if (family === 0 || rest.length > 0) return true
    return prefix !== undefined && !(/^\d+$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
  })
  if (entries.length === 0 || bad.length > 0) {
    ctx.addIssue({
      code: 'custom',
      message: `TRUST_PROXY must be true, false, or proxy addresses, CIDRs and range names (not: ${bad.join(', ') || 'empty'})`,
    })
    return z.NEVER
  }
  return entries
}

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
  const data = result.data as Record<string, unknown>
  for (const variable of SECRET_REFERENCES) {
    const reference = data[variable]
    if (typeof reference === 'string') data[variable] = resolveSecretReference(variable, reference, env)
  }
  return Object.freeze(result.data) as Readonly<z.output<T>>
}
