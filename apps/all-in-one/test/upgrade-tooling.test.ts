import { spawnSync } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defaultClaims, zCredentialConfigInput } from '@credential-service/core-domain'
import { TEST_MASTER_SECRET, type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import {
  importConfigDir,
  importDeps,
  migrateConfigDir,
  parseManagementConfig,
  upgradeCheck,
} from '@credential-service/management'
import { createKeyRuntime } from '@credential-service/server-kit'
import { afterAll, describe, expect, it } from 'vitest'
import { appEntry } from '../../../scripts/test-bundles'
import { loadOrCreateDevSecrets } from '../src/dev-secrets'

const FIXTURE = new URL('./fixtures/v4-config', import.meta.url).pathname
const root = new URL('../../..', import.meta.url).pathname
const scratch: string[] = []
const temp = () => {
  const dir = mkdtempSync(join(tmpdir(), 'upgrade-'))
  scratch.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})

/** Every file below `dir` with its bytes, to prove a folder was not touched. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (path: string) => {
    for (const name of readdirSync(path)) {
      const full = join(path, name)
      if (statSync(full).isDirectory()) walk(full)
      else out[full.slice(dir.length)] = readFileSync(full, 'utf8')
    }
  }
  walk(dir)
  return out
}

/** A copy of the 4.x fixture under a random tenant name. */
function legacyCopy(): { dir: string; tenant: string } {
  const dir = temp()
  const tenant = `legacy-${crypto.randomUUID().slice(0, 8)}`
  cpSync(join(FIXTURE, 'legacy'), join(dir, tenant), { recursive: true })
  return { dir, tenant }
}

const v1 = (name: string) =>
  JSON.parse(readFileSync(join(FIXTURE, 'legacy', 'credentials', `${name}.json`), 'utf8'))
const read = (path: string) => JSON.parse(readFileSync(path, 'utf8'))

describe('config:migrate (spec §9.2 mapping)', () => {
  it('converts version 1 credentials and 3.x keys/certs, prints what changed, never touches the input', () => {
    const { dir, tenant } = legacyCopy()
    const before = snapshot(dir)
    const out = join(temp(), 'v5')
    const result = migrateConfigDir(dir, out)
    expect(snapshot(dir)).toStrictEqual(before)
    expect(existsSync(join(out, tenant, 'keys'))).toBe(false)
    expect(result.written.sort()).toStrictEqual(
      [
        'attribute-providers/pid-claims.json',
        'credentials/mdl-aamva.json',
        'credentials/mdl.json',
        'credentials/pid.json',
        'key-chains/pid-key.json',
        'presentations/age-check.json',
        'webhook-endpoints/pid-notifications.json',
      ].map((f) => `${tenant}/${f}`),
    )
    expect(result.changes).toEqual(
      expect.arrayContaining([
        `${tenant}/credentials/pid.json: claims → fields[].defaultValue`,
        `${tenant}/credentials/pid.json: disclosureFrame → fields[].disclosable`,
        `${tenant}/credentials/pid.json: keyId 'pid-key' → keyChainId`,
        `${tenant}/credentials/mdl.json: certId 'pid-cert' → keyChainId 'pid-key'`,
        expect.stringContaining(
          `${tenant}/keys/pid-key.json: → key-chains/pid-key.json with certs/pid-cert.json`,
        ),
      ]),
    )
  })

  it('trust-lists/ and wallet-providers/ of a folder pass through unchanged', () => {
    const { dir, tenant } = legacyCopy()
    const list = { source: { type: 'pem', certificates: ['${WALLET_ROOT}'] } }
    const provider = { name: 'Listed', trustListIds: ['wallets'] }
    for (const [folder, body] of [
      ['trust-lists', list],
      ['wallet-providers', provider],
    ] as const) {
      const path = join(dir, tenant, folder)
      mkdirSync(path, { recursive: true })
      writeFileSync(
        join(path, folder === 'trust-lists' ? 'wallets.json' : 'listed.json'),
        JSON.stringify(body),
      )
    }
    const out = join(temp(), 'v5')
    const result = migrateConfigDir(dir, out)
    expect(result.written).toEqual(
      expect.arrayContaining([
        `${tenant}/trust-lists/wallets.json`,
        `${tenant}/wallet-providers/listed.json`,
      ]),
    )
    expect(read(join(out, tenant, 'trust-lists', 'wallets.json'))).toStrictEqual(list)
    expect(read(join(out, tenant, 'wallet-providers', 'listed.json'))).toStrictEqual(provider)
  })

  it('the SD-JWT mapping: defaults equal the v1 claims, disclosable as the frame said, metadata as display/mandatory', () => {
    const { dir, tenant } = legacyCopy()
    const out = join(temp(), 'v5')
    migrateConfigDir(dir, out)
    const pid = zCredentialConfigInput.parse(read(join(out, tenant, 'credentials', 'pid.json')))
    expect(defaultClaims(pid)).toStrictEqual(v1('pid').claims)
    const disclosable = pid.fields.filter((f) => f.disclosable).map((f) => f.path.join('.'))
    expect(disclosable.sort()).toStrictEqual([
      'address.locality',
      'address.street_address',
      'birthdate',
      'family_name',
      'given_name',
      'nationalities',
    ])
    const given = pid.fields.find((f) => f.path.join('.') === 'given_name')
    expect(given).toMatchObject({
      mandatory: true,
      display: v1('pid').config.claimsMetadata.given_name.display,
    })
    expect(pid.fields.find((f) => f.path.join('.') === 'birthdate')?.type).toBe('date')
    expect(pid.fields.find((f) => f.path.join('.') === 'age_in_years')?.type).toBe('integer')
    expect(pid).toMatchObject({
      keyChainId: 'pid-key',
      attributeProviderId: 'pid-claims',
      webhookEndpointId: 'pid-notifications',
    })
    expect(read(join(out, tenant, 'attribute-providers', 'pid-claims.json'))).toStrictEqual({
      url: 'https://hr.example.com/claims',
      auth: { type: 'api-key', headerName: 'x-api-key', value: 'hr-api-key-0123456789' },
    })
  })

  it('the mdoc mapping: config.namespace and claimsByNamespace become per-field namespaces', () => {
    const { dir, tenant } = legacyCopy()
    const out = join(temp(), 'v5')
    migrateConfigDir(dir, out)
    const mdl = zCredentialConfigInput.parse(read(join(out, tenant, 'credentials', 'mdl.json')))
    expect(defaultClaims(mdl)).toStrictEqual({ 'org.iso.18013.5.1': v1('mdl').claims })
    expect(mdl.config).toStrictEqual({ format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' })
    const aamva = zCredentialConfigInput.parse(read(join(out, tenant, 'credentials', 'mdl-aamva.json')))
    expect(defaultClaims(aamva)).toStrictEqual(v1('mdl-aamva').config.claimsByNamespace)
  })

  it('refuses an output folder that is not empty or lies inside the input', () => {
    const { dir } = legacyCopy()
    expect(() => migrateConfigDir(dir, join(dir, 'out'))).toThrow(/outside the input/)
    expect(() => migrateConfigDir(dir, dir.replace(/\/[^/]+$/, ''))).toThrow(/not empty|outside/)
  })
})

describe.each(testDatabases())('upgrade round trip on $name', (testDatabase: TestDatabase) => {
  it('migrate → import → the same claims as version 1; upgrade:check is clean after, blocking before', async () => {
    const { dir, tenant } = legacyCopy()
    const out = join(temp(), 'v5')
    migrateConfigDir(dir, out)
    const database = await testDatabase.open()
    try {
      const config = parseManagementConfig({
        PUBLIC_URL: 'https://issuer.test',
        MASTER_SECRET: TEST_MASTER_SECRET,
        AUTH_CLIENT_ID: 'x-root',
        AUTH_CLIENT_SECRET: 'x-root-secret-0123456789',
      })
      const keys = createKeyRuntime({ config, db: database.db })
      const outbound = { allowHttp: false, allowedHosts: [] }
      const blocking = await upgradeCheck({
        dir,
        env: {},
        outbound,
        database: database.db,
        masterSecret: TEST_MASTER_SECRET,
      })
      expect(blocking.filter((f) => f.startsWith('config'))).toEqual(
        expect.arrayContaining([
          expect.stringContaining(`${tenant}/keys`),
          expect.stringContaining(`${tenant}/certs`),
          expect.stringContaining(`${tenant}/credentials/pid.json claims`),
          expect.stringContaining(`${tenant}/credentials/mdl.json config.namespace`),
        ]),
      )
      expect(
        await upgradeCheck({
          dir: out,
          env: {},
          outbound,
          database: database.db,
          masterSecret: TEST_MASTER_SECRET,
        }),
      ).toStrictEqual([])

      const report = await importConfigDir(importDeps(config, database.db, keys), out, {})
      expect(report.ok, JSON.stringify(report)).toBe(true)
      const { createCredentialConfigRepository, createKeyChainRepository } = await import(
        '@credential-service/db-schema'
      )
      for (const name of ['pid', 'mdl']) {
        const stored = await createCredentialConfigRepository(database.db, tenant).get(name)
        const expected = name === 'pid' ? v1('pid').claims : { 'org.iso.18013.5.1': v1('mdl').claims }
        expect(defaultClaims(stored as never)).toStrictEqual(expected)
      }
      // The 3.x private key was imported as it was: the same public key as its certificate.
      const chain = await createKeyChainRepository(database.db, tenant).get('pid-key')
      expect(chain?.certificateMode).toBe('provided')
    } finally {
      await database.close()
    }
  }, 90_000)
})

describe('operator commands', () => {
  const cli = (name: string, args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [...appEntry('all-in-one', `cli/${name}`), ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: temp(), MASTER_SECRET: TEST_MASTER_SECRET, ...env },
      encoding: 'utf8',
      timeout: 60_000,
    })

  it('upgrade:check exits 1 on a 4.x folder and on pending migrations; 0 once migrated and imported', () => {
    const { dir } = legacyCopy()
    const env = { DATA_DIR: temp() }
    const before = cli('upgrade-check', [dir], env)
    expect(before.status).toBe(1)
    expect(before.stdout).toContain('pending migration(s): 0000_foundation')
    expect(before.stdout).toContain('/keys: the 3.x')
    const out = join(temp(), 'v5')
    const migrated = cli('config-migrate', [dir, '--out', out])
    expect(migrated.status).toBe(0)
    expect(migrated.stdout).toContain('claims → fields[].defaultValue')
    const imported = cli('config-import', [out], env)
    expect(imported.status, imported.stdout + imported.stderr).toBe(0)
    const after = cli('upgrade-check', [out], env)
    expect(after.stdout).toContain('nothing blocks the upgrade')
    expect(after.status).toBe(0)
  }, 240_000)

  it('upgrade:check names what a key chain file lacks: externalKeyId, and the variables of its provider (issue 40)', () => {
    const { dir, tenant } = legacyCopy()
    const out = join(temp(), 'v5')
    migrateConfigDir(dir, out)
    const file = (name: string, json: object) =>
      writeFileSync(join(out, tenant, 'key-chains', `${name}.json`), JSON.stringify(json))
    file('kms', { source: 'external', kmsProvider: 'aws-kms' })
    file('vault', { source: 'external', kmsProvider: 'vault' })
    file('azure', { source: 'external', kmsProvider: 'azure-key-vault' })
    file('gcp', { source: 'generate', kmsProvider: 'gcp-kms' })
    // An import into Cloud KMS makes a key in the key ring too.
    file('gcp-import', {
      source: 'import',
      kmsProvider: 'gcp-kms',
      privateKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }),
    })
    file('hsm', { source: 'external', kmsProvider: 'pkcs11', externalKeyId: 'issuer' })
    const result = cli('upgrade-check', [out], { PKCS11_MODULE: '/usr/lib/softhsm/libsofthsm2.so' })
    expect(result.status).toBe(1)
    const lines = result.stdout.split('\n')
    const of = (name: string) =>
      lines.filter((line) => line.startsWith(`config ${tenant}/key-chains/${name}.json`))
    expect(of('kms')).toStrictEqual([
      `config ${tenant}/key-chains/kms.json externalKeyId: an external aws-kms key chain names its key in externalKeyId: the AWS KMS key id, ARN or alias`,
    ])
    expect(of('vault')).toStrictEqual([
      `config ${tenant}/key-chains/vault.json externalKeyId: an external vault key chain names its key in externalKeyId: the Vault transit key name`,
      `config ${tenant}/key-chains/vault.json kmsProvider: the vault provider needs VAULT_ADDR, VAULT_TOKEN, not set on this process`,
    ])
    expect(of('azure')).toStrictEqual([
      `config ${tenant}/key-chains/azure.json externalKeyId: an external azure-key-vault key chain names its key in externalKeyId: the Azure Key Vault key name (or name/version)`,
      `config ${tenant}/key-chains/azure.json kmsProvider: the azure-key-vault provider needs AZURE_KEY_VAULT_URL, AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET, not set on this process`,
    ])
    expect(of('gcp')).toStrictEqual([
      `config ${tenant}/key-chains/gcp.json kmsProvider: the gcp-kms provider (generating keys) needs GCP_KMS_CREDENTIALS, GCP_KMS_KEY_RING, not set on this process`,
    ])
    expect(of('gcp-import')).toStrictEqual([
      `config ${tenant}/key-chains/gcp-import.json kmsProvider: the gcp-kms provider (importing keys) needs GCP_KMS_CREDENTIALS, GCP_KMS_KEY_RING, not set on this process`,
    ])
    expect(of('hsm')).toStrictEqual([
      `config ${tenant}/key-chains/hsm.json kmsProvider: the pkcs11 provider needs PKCS11_TOKEN_LABEL, PKCS11_PIN, not set on this process`,
    ])
  }, 120_000)

  it('config:import exits 1 and names the file when a tenant is rejected', () => {
    const { dir, tenant } = legacyCopy()
    renameSync(join(dir, tenant, 'keys'), join(dir, tenant, 'old-keys'))
    const result = cli('config-import', [dir])
    expect(result.status).toBe(1)
    expect(result.stdout).toContain(`${tenant}: rejected`)
    expect(result.stdout).toContain(`${tenant}/credentials/pid.json claims`)
  }, 120_000)
})

describe('issue 13: operator commands never invent MASTER_SECRET', () => {
  const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts as Record<
    string,
    string
  >
  const tsx = import.meta.resolve('tsx')
  /** Runs `npm run <script>` as npm would (its `tsx <file>`), but in `cwd`, with only `env` set. */
  const npmRun = (script: string, args: string[], cwd: string, env: Record<string, string> = {}) => {
    const file = /^tsx (\S+)$/.exec(scripts[script] ?? '')?.[1]
    if (!file) throw new Error(`package.json script ${script} is not \`tsx <file>\``)
    return spawnSync(process.execPath, ['--import', tsx, join(root, file), ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
      encoding: 'utf8',
      timeout: 60_000,
    })
  }

  it.each([
    ['config:import', ['some-dir']],
    ['upgrade:check', []],
  ])(
    '%s with no MASTER_SECRET in an empty cwd: status 2, MASTER_SECRET named, nothing written',
    (script, args) => {
      const cwd = temp()
      const result = npmRun(script, args, cwd)
      expect(result.status, result.stderr).toBe(2)
      expect(result.stderr).toContain(`${script}: invalid configuration`)
      expect(result.stderr).toContain('MASTER_SECRET is required')
      expect(result.stderr).toContain(`${script} never generates MASTER_SECRET`)
      expect(readdirSync(cwd)).toStrictEqual([])
    },
    60_000,
  )

  it('config:migrate and db:migrate need no secret and write no dev-secrets.json', () => {
    const cwd = temp()
    const { dir } = legacyCopy()
    const migrated = npmRun('config:migrate', [dir, '--out', join(cwd, 'v5')], cwd)
    expect(migrated.status, migrated.stderr).toBe(0)
    const schema = npmRun('db:migrate', [], cwd)
    expect(schema.status, schema.stderr).toBe(0)
    expect(schema.stdout).toContain(`migrations applied to PGlite at ${join('.data', 'pglite')}`)
    expect(readdirSync(cwd).sort()).toStrictEqual(['.data', 'v5'])
    expect(readdirSync(join(cwd, '.data'))).toStrictEqual(['pglite'])
  }, 120_000)

  it('on the embedded database they use the secret `npm start` generated, and never rewrite it', () => {
    const cwd = temp()
    const dataDir = join(cwd, '.data')
    const secrets = loadOrCreateDevSecrets(join(dataDir, 'dev-secrets.json'))
    const bytes = readFileSync(join(dataDir, 'dev-secrets.json'), 'utf8')
    // config:import records the fingerprint of the secret it ran with (an empty folder imports nothing).
    const imported = npmRun('config:import', [temp()], cwd)
    expect(imported.status, imported.stderr).toBe(0)
    const check = npmRun('upgrade:check', [], cwd)
    expect(check.stdout).toContain('nothing blocks the upgrade')
    expect(check.status).toBe(0)
    // That fingerprint is the generated secret's: another secret is reported.
    const other = npmRun('upgrade:check', [], cwd, { MASTER_SECRET: 'x'.repeat(40) })
    expect(secrets.MASTER_SECRET).not.toBe('x'.repeat(40))
    expect(other.stdout).toContain('MASTER_SECRET differs')
    expect(readFileSync(join(dataDir, 'dev-secrets.json'), 'utf8')).toBe(bytes)
  }, 180_000)

  it('with DATABASE_URL set they ignore dev-secrets.json (it belongs to the embedded database)', () => {
    const cwd = temp()
    loadOrCreateDevSecrets(join(cwd, '.data', 'dev-secrets.json'))
    const result = npmRun('upgrade:check', [], cwd, { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' })
    expect(result.status).toBe(2)
    expect(result.stderr).toContain('MASTER_SECRET is required')
  }, 60_000)
})
