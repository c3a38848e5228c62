import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, DEFAULT_HTTP_LIMITS, httpLimits } from '@credential-service/server-kit'
import { describe, expect, it } from 'vitest'
import { appEntry } from '../../../scripts/test-bundles'
import { keycloakRealm, parseManagementConfig } from '../src/config'

const base = {
  PUBLIC_URL: 'https://issuer.test',
  MASTER_SECRET: 'm'.repeat(32),
  AUTH_CLIENT_ID: 'root',
  AUTH_CLIENT_SECRET: 's'.repeat(16),
}

const issuesOf = (env: Record<string, string>) => {
  try {
    parseManagementConfig(env)
  } catch (error) {
    if (error instanceof ConfigError) return error.issues
    throw error
  }
  return []
}

describe('management configuration (spec §5.3, §5.4, §8)', () => {
  it('accepts the built-in token server set and fills defaults', () => {
    const config = parseManagementConfig({ ...base, PUBLIC_URL: 'https://issuer.test/' })
    expect(config.PUBLIC_URL).toBe('https://issuer.test')
    expect(config.ACCESS_TOKEN_TTL_SECONDS).toBe(3600)
    expect(Object.isFrozen(config)).toBe(true)
  })

  it('S-122: request limits default to 1 MiB body, 16 KiB headers, 8 KiB URI, and refuse nonsense', () => {
    const config = parseManagementConfig(base)
    expect(httpLimits(config)).toStrictEqual({ bodyBytes: 1_048_576, headerBytes: 16_384, urlBytes: 8192 })
    expect(httpLimits(config)).toStrictEqual(DEFAULT_HTTP_LIMITS)
    expect(httpLimits(parseManagementConfig({ ...base, BODY_LIMIT_BYTES: '2097152' })).bodyBytes).toBe(
      2_097_152,
    )
    expect(
      issuesOf({ ...base, BODY_LIMIT_BYTES: '0', HEADER_LIMIT_BYTES: 'big', URL_LIMIT_BYTES: '-1' }),
    ).toEqual([
      expect.stringContaining('BODY_LIMIT_BYTES'),
      expect.stringContaining('HEADER_LIMIT_BYTES'),
      expect.stringContaining('URL_LIMIT_BYTES'),
    ])
  })

  it('issue 11: rate limits and trusted proxies default to what a deployment behind an ingress wants', () => {
    const config = parseManagementConfig(base)
    expect({
      TRUST_PROXY: config.TRUST_PROXY,
      RATE_LIMIT_STORE: config.RATE_LIMIT_STORE,
      RATE_LIMIT_TOKEN_PER_MINUTE: config.RATE_LIMIT_TOKEN_PER_MINUTE,
      RATE_LIMIT_WALLET_PER_MINUTE: config.RATE_LIMIT_WALLET_PER_MINUTE,
      RATE_LIMIT_WALLET_TENANT_PER_MINUTE: config.RATE_LIMIT_WALLET_TENANT_PER_MINUTE,
    }).toStrictEqual({
      TRUST_PROXY: ['loopback', 'linklocal', 'uniquelocal'],
      RATE_LIMIT_STORE: undefined,
      RATE_LIMIT_TOKEN_PER_MINUTE: 10,
      RATE_LIMIT_WALLET_PER_MINUTE: 300,
      RATE_LIMIT_WALLET_TENANT_PER_MINUTE: 0,
    })
    const custom = parseManagementConfig({ ...base, TRUST_PROXY: '10.0.0.0/8, 192.0.2.1, ::1' })
    expect(custom.TRUST_PROXY).toStrictEqual(['10.0.0.0/8', '192.0.2.1', '::1'])
    expect(parseManagementConfig({ ...base, TRUST_PROXY: 'false' }).TRUST_PROXY).toBe(false)
  })

  it('issue 11: a bad TRUST_PROXY entry, rate-limit store or negative limit is refused by name', () => {
    expect(issuesOf({ ...base, TRUST_PROXY: '10.0.0.0/40, proxy.internal' })).toStrictEqual([
      'TRUST_PROXY must be true, false, or proxy addresses, CIDRs and range names (not: 10.0.0.0/40, proxy.internal)',
    ])
    // Fastify 5 would read a hop count as "trust no proxy": say so at start instead.
    expect(issuesOf({ ...base, TRUST_PROXY: '1' })).toHaveLength(1)
    expect(issuesOf({ ...base, RATE_LIMIT_STORE: 'redis' })).toStrictEqual([
      expect.stringContaining('RATE_LIMIT_STORE'),
    ])
    expect(issuesOf({ ...base, RATE_LIMIT_TOKEN_PER_MINUTE: '-1' })).toStrictEqual([
      expect.stringContaining('RATE_LIMIT_TOKEN_PER_MINUTE'),
    ])
  })

  it('spec §8: a MASTER_SECRET under 32 characters is refused, naming the variable, never its value', () => {
    const issues = issuesOf({ ...base, MASTER_SECRET: 'short-secret-value' })
    expect(issues).toStrictEqual(['MASTER_SECRET must be at least 32 characters'])
    expect(issues.join()).not.toContain('short-secret-value')
  })

  it('issue 40: PKCS11_PIN is a secret reference (env:NAME or file:/path), read once; a plain PIN or a dangling reference is refused by name, never its value', () => {
    const folder = mkdtempSync(join(tmpdir(), 'pin-'))
    const file = join(folder, 'pin')
    writeFileSync(file, '4711-from-file\n')
    expect(
      parseManagementConfig({ ...base, PKCS11_PIN: 'env:HSM_PIN', HSM_PIN: '4711-from-env' }).PKCS11_PIN,
    ).toBe('4711-from-env')
    expect(parseManagementConfig({ ...base, PKCS11_PIN: `file:${file}` }).PKCS11_PIN).toBe('4711-from-file')
    expect(issuesOf({ ...base, PKCS11_PIN: '4711' })).toStrictEqual([
      'PKCS11_PIN: must be a secret reference: env:NAME or file:/path',
    ])
    expect(issuesOf({ ...base, PKCS11_PIN: 'env:UNSET_PIN' })).toStrictEqual([
      'PKCS11_PIN: env:UNSET_PIN names a variable that is not set',
    ])
    expect(issuesOf({ ...base, PKCS11_PIN: `file:${folder}/none` })).toStrictEqual([
      `PKCS11_PIN: file:${folder}/none cannot be read or is empty`,
    ])
  })

  it('issue 40: GCP_KMS_CREDENTIALS names a service account key file, which must be one; its content is never shown', () => {
    const folder = mkdtempSync(join(tmpdir(), 'gcp-'))
    const file = join(folder, 'key.json')
    writeFileSync(file, '{"type":"service_account","client_email":"a@b","private_key":"secret-pem"}')
    expect(
      parseManagementConfig({ ...base, GCP_KMS_CREDENTIALS: `file:${file}` }).GCP_KMS_CREDENTIALS,
    ).toContain('a@b')
    expect(issuesOf({ ...base, GCP_KMS_CREDENTIALS: '{"client_email":"a@b"}' })).toStrictEqual([
      'GCP_KMS_CREDENTIALS: must be a secret reference: env:NAME or file:/path',
    ])
  })

  it('spec §5.3: without OIDC every built-in variable is required, each named', () => {
    expect(issuesOf({})).toEqual(
      expect.arrayContaining([
        expect.stringContaining('PUBLIC_URL'),
        expect.stringContaining('MASTER_SECRET'),
        expect.stringContaining('AUTH_CLIENT_ID'),
        expect.stringContaining('AUTH_CLIENT_SECRET'),
      ]),
    )
  })

  it('spec §5.4: OIDC mode needs OIDC_CLIENT_ID and OIDC_CLIENT_SECRET, not AUTH_*', () => {
    const oidc = {
      PUBLIC_URL: base.PUBLIC_URL,
      MASTER_SECRET: base.MASTER_SECRET,
      OIDC: 'https://idp.test/realms/x',
    }
    expect(issuesOf(oidc)).toStrictEqual([
      'OIDC_CLIENT_ID is required when OIDC is set',
      'OIDC_CLIENT_SECRET is required when OIDC is set',
    ])
    expect(issuesOf({ ...oidc, OIDC_CLIENT_ID: 'admin', OIDC_CLIENT_SECRET: 'x' })).toStrictEqual([])
    expect(
      issuesOf({ ...oidc, OIDC_CLIENT_ID: 'admin', OIDC_CLIENT_SECRET: 'x', AUTH_CLIENT_ID: 'root' }),
    ).toStrictEqual(['AUTH_CLIENT_ID and AUTH_CLIENT_SECRET are set together or not at all in OIDC mode'])
    expect(
      issuesOf({ ...oidc, OIDC: 'not a url', OIDC_CLIENT_ID: 'a', OIDC_CLIENT_SECRET: 'b' })[0],
    ).toContain('OIDC')
  })

  it("checklist S-108: the console's client, whose users' tokens are bound to their tenant, is none of the service's own clients", () => {
    const oidc = {
      PUBLIC_URL: base.PUBLIC_URL,
      MASTER_SECRET: base.MASTER_SECRET,
      OIDC: 'https://idp.test/realms/x',
      OIDC_CLIENT_ID: 'admin',
      OIDC_CLIENT_SECRET: 'x',
      AUTH_CLIENT_ID: 'root',
      AUTH_CLIENT_SECRET: 's'.repeat(16),
    }
    const refused = [
      'CONSOLE_OIDC_CLIENT_ID must be a public client of its own, not OIDC_CLIENT_ID or AUTH_CLIENT_ID',
    ]
    expect(issuesOf({ ...oidc, CONSOLE_OIDC_CLIENT_ID: 'console' })).toStrictEqual([])
    expect(issuesOf({ ...oidc, CONSOLE_OIDC_CLIENT_ID: 'admin' })).toStrictEqual(refused)
    expect(issuesOf({ ...oidc, CONSOLE_OIDC_CLIENT_ID: 'root' })).toStrictEqual(refused)
  })

  it('spec §5.4: clients are managed through Keycloak, so the issuer the service reaches is a realm', () => {
    const oidc = {
      PUBLIC_URL: base.PUBLIC_URL,
      MASTER_SECRET: base.MASTER_SECRET,
      OIDC_CLIENT_ID: 'admin',
      OIDC_CLIENT_SECRET: 'x',
    }
    expect(issuesOf({ ...oidc, OIDC: 'https://idp.test/oauth2' })).toStrictEqual([
      'OIDC: must be a Keycloak realm issuer (<base>/realms/<realm>): clients are managed through the Keycloak admin API',
    ])
    // The internal URL is the one the admin API is reached at; the public one may differ.
    expect(
      issuesOf({
        ...oidc,
        OIDC: 'https://id.example.com/x',
        OIDC_INTERNAL_ISSUER_URL: 'http://kc:8080/realms/acme',
      }),
    ).toStrictEqual([])
    expect(
      issuesOf({ ...oidc, OIDC: 'https://idp.test/realms/x', OIDC_ROLES_CLAIM: 'realm_access..roles' }),
    ).toHaveLength(1)
    const config = parseManagementConfig({ ...oidc, OIDC: 'https://idp.test/auth/realms/acme' })
    expect(config).toMatchObject({ OIDC_TENANT_CLAIM: 'tenant_id', OIDC_ROLES_CLAIM: 'roles' })
    expect(config.OIDC_AUDIENCE).toBeUndefined()
    expect(keycloakRealm('https://idp.test/auth/realms/acme')).toStrictEqual({
      baseUrl: 'https://idp.test/auth',
      realm: 'acme',
    })
  })
})

describe('standalone start-up', () => {
  const start = (env: Record<string, string>) =>
    spawnSync(process.execPath, appEntry('management'), {
      cwd: new URL('../../..', import.meta.url).pathname,
      env: { PATH: process.env.PATH ?? '', ...env },
      encoding: 'utf8',
      timeout: 30_000,
    })

  it('spec §8: a short MASTER_SECRET stops the process with a message naming it', () => {
    const result = start({ ...base, MASTER_SECRET: 'too-short', DATABASE_URL: 'postgres://127.0.0.1:1/none' })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain('MASTER_SECRET must be at least 32 characters')
    expect(result.stderr).not.toContain('too-short')
  })

  it('the standalone app refuses to start without DATABASE_URL', () => {
    const result = start(base)
    expect(result.status).toBe(1)
    expect(result.stderr).toContain('DATABASE_URL is required')
  })
})
