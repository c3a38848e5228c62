import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createCertificate, generateKeyPair } from '@credential-service/crypto'
import {
  anchorsTrustListId,
  createCredentialConfigRepository,
  createTenantRepository,
} from '@credential-service/db-schema'
import { queryRows, testDatabases } from '@credential-service/db-schema/testing'
import { outboundPolicy } from '@credential-service/server-kit'
import { sql } from 'drizzle-orm'
import { SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { importConfigDir, importDeps, migrateConfigDir } from '../src/app'
import { upgradeCheck } from '../src/upgrade-check'
import { createHarness, type Harness, random } from './harness'

const EXAMPLE = new URL('../../../docker/config', import.meta.url).pathname
const folders: string[] = []

/** A fresh import folder; `files` maps `<tenant>/<kind>/<name>.json` to contents. */
function tree(files: Record<string, unknown>): string {
  const root = mkdtempSync(join(tmpdir(), 'import-'))
  folders.push(root)
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), typeof content === 'string' ? content : JSON.stringify(content))
  }
  return root
}

/** The shipped example under a random tenant id and client id, so suites do not collide. */
function exampleCopy(): { root: string; tenant: string; clientId: string } {
  const root = mkdtempSync(join(tmpdir(), 'example-'))
  folders.push(root)
  const tenant = random('acme')
  const clientId = random('backend')
  cpSync(join(EXAMPLE, 'acme'), join(root, tenant), { recursive: true })
  renameSync(join(root, tenant, 'clients', 'backend.json'), join(root, tenant, 'clients', `${clientId}.json`))
  return { root, tenant, clientId }
}

const keyChain = { source: 'generate' }
const credential = (keyChainId: string) => ({
  config: { format: 'dc+sd-jwt', vct: 'urn:example:x' },
  fields: [{ path: ['name'], type: 'string', defaultValue: 'x' }],
  keyChainId,
})

describe.each(testDatabases())('config import on $name', (testDatabase) => {
  let h: Harness
  const run = (root: string, env: Record<string, string> = {}) =>
    importConfigDir(importDeps(h.config, h.database.db, h.keys), root, env)
  const tenantExists = async (tenant: string) =>
    (
      await h.app.inject({
        url: `/api/tenants/${tenant}`,
        headers: { authorization: `Bearer ${await h.tokenFor(h.root.clientId, h.root.clientSecret)}` },
      })
    ).statusCode === 200

  beforeAll(async () => {
    h = await createHarness(testDatabase)
  })
  afterAll(async () => {
    await h.close()
    for (const folder of folders) rmSync(folder, { recursive: true, force: true })
  })

  it('imports the shipped example in dependency order, resolving ${VAR:default} placeholders', async () => {
    const { root, tenant, clientId } = exampleCopy()
    const report = await run(root, { ACME_BACKEND_SECRET: 'backend-secret-from-the-environment' })
    expect(report).toStrictEqual({
      ok: true,
      tenants: [
        {
          tenant,
          status: 'imported',
          issues: [],
          counts: {
            keyChainsCreated: 2,
            attributeProviders: 1,
            webhookEndpoints: 1,
            loginProviders: 0,
            trustLists: 0,
            walletProviders: 0,
            credentials: 2,
            presentations: 1,
            authServers: 0,
            federation: 0,
            clients: 1,
          },
        },
      ],
    })
    // The client got the secret from the environment, not the default.
    expect(await h.tokenFor(clientId, 'backend-secret-from-the-environment')).toEqual(expect.any(String))
    const admin = await h.createClient(tenant, ['issuance:config', 'key:read'])
    const pid = (await h.app.inject({ url: '/api/credentials/pid', headers: admin.auth })).json()
    expect(pid).toMatchObject({
      keyChainId: 'pid-signing',
      attributeProviderId: 'hr-system',
      webhookEndpointId: 'events',
    })
    const chain = (await h.app.inject({ url: '/api/key-chains/pid-signing', headers: admin.auth })).json()
    expect(chain).toMatchObject({
      certificateMode: 'internal-ca',
      rotationPolicy: { enabled: true, intervalDays: 90 },
    })
  })

  it('I-48: wallet-providers/ is imported; an anchor that is not a certificate is an issue naming file and path', async () => {
    const keys = await generateKeyPair('ES256')
    const anchor = await createCertificate({
      subjectPublicJwk: keys.publicJwk,
      subject: 'CN=Wallet Root',
      issuerPrivateJwk: keys.privateJwk,
      validityDays: 30,
      ca: true,
    })
    const good = random('wp')
    const root = tree({
      [`${good}/wallet-providers/acme.json`]: { id: 'acme', name: 'ACME', trustAnchors: [anchor] },
    })
    const report = await run(root)
    expect(report.tenants[0]?.counts?.walletProviders).toBe(1)
    const admin = await h.createClient(good, ['issuance:config'])
    const read = await h.app.inject({ url: '/api/wallet-providers/acme', headers: admin.auth })
    expect(read.json()).toMatchObject({ id: 'acme', trustListIds: [anchorsTrustListId([anchor])] })
    const bad = random('wp')
    const broken = tree({
      [`${bad}/wallet-providers/x.json`]: { id: 'x', name: 'X', trustAnchors: ['nope'] },
    })
    expect((await run(broken)).tenants[0]?.issues).toStrictEqual([
      {
        file: `${bad}/wallet-providers/x.json`,
        path: 'trustAnchors.0',
        message: 'not a valid PEM X.509 certificate',
      },
    ])
  })

  it('trust-lists/ are imported before the presentations and wallet providers that name them; a bad or unknown list is an issue naming file and path', async () => {
    const keys = await generateKeyPair('ES256')
    const anchor = await createCertificate({
      subjectPublicJwk: keys.publicJwk,
      subject: 'CN=Listed Root',
      issuerPrivateJwk: keys.privateJwk,
      validityDays: 30,
      ca: true,
    })
    const dcqlQuery = {
      credentials: [{ id: 'x', format: 'dc+sd-jwt', meta: { vct_values: ['urn:example:x'] } }],
    }
    const tenant = random('tl')
    const files = {
      [`${tenant}/key-chains/k.json`]: keyChain,
      [`${tenant}/trust-lists/issuers.json`]: { source: { type: 'pem', certificates: [anchor] } },
      [`${tenant}/presentations/pid.json`]: { keyChainId: 'k', dcqlQuery, trustListIds: ['issuers'] },
      [`${tenant}/wallet-providers/w.json`]: { name: 'Listed wallets', trustListIds: ['issuers'] },
    }
    const report = await run(tree(files))
    expect(report.tenants[0]?.issues).toStrictEqual([])
    expect(report.tenants[0]?.counts).toMatchObject({ trustLists: 1, presentations: 1, walletProviders: 1 })
    const admin = await h.createClient(tenant, ['presentation:config', 'issuance:config'])
    const get = async (url: string) => (await h.app.inject({ url, headers: admin.auth })).json()
    expect(await get('/api/trust-lists/issuers')).toMatchObject({
      id: 'issuers',
      source: { type: 'pem', certificates: [anchor] },
      status: { state: 'current', certificateCount: 1 },
    })
    expect((await get('/api/presentations/pid')).trustListIds).toStrictEqual(['issuers'])
    expect(await get('/api/wallet-providers/w')).toMatchObject({ trustListIds: ['issuers'] })
    // Idempotent: a second run brings the list to the file's state again.
    expect((await run(tree(files))).ok).toBe(true)

    const bad = random('tl')
    const rejected = await run(
      tree({
        [`${bad}/key-chains/k.json`]: keyChain,
        [`${bad}/trust-lists/broken.json`]: { source: { type: 'pem', certificates: ['nope'] } },
        [`${bad}/trust-lists/remote.json`]: {
          source: { type: 'etsi-tl', url: 'https://10.0.0.1/tl.xml', signerCertificates: [anchor] },
        },
        [`${bad}/presentations/pid.json`]: { keyChainId: 'k', dcqlQuery, trustListIds: ['missing'] },
        [`${bad}/wallet-providers/w.json`]: { name: 'W', trustListIds: ['missing'] },
      }),
    )
    expect(rejected.tenants[0]?.status).toBe('rejected')
    expect(rejected.tenants[0]?.issues).toStrictEqual([
      {
        file: `${bad}/trust-lists/broken.json`,
        path: 'source.certificates.0',
        message: 'not a valid PEM X.509 certificate',
      },
      { file: `${bad}/trust-lists/remote.json`, path: 'source.url', message: expect.any(String) },
    ])
    expect(await tenantExists(bad)).toBe(false)
    // With valid lists, references to a list neither in the folder nor stored are issues too.
    const unknown = random('tl')
    const missing = await run(
      tree({
        [`${unknown}/key-chains/k.json`]: keyChain,
        [`${unknown}/presentations/pid.json`]: { keyChainId: 'k', dcqlQuery, trustListIds: ['missing'] },
        [`${unknown}/wallet-providers/w.json`]: { name: 'W', trustListIds: ['missing'] },
      }),
    )
    // Issues come by file, whatever the order of application.
    expect(missing.tenants[0]?.issues).toStrictEqual([
      {
        file: `${unknown}/presentations/pid.json`,
        path: 'trustListIds.0',
        message: "no trust list 'missing' in this tenant",
      },
      {
        file: `${unknown}/wallet-providers/w.json`,
        path: 'trustListIds.0',
        message: "no trust list 'missing' in this tenant",
      },
    ])
    expect(await tenantExists(unknown)).toBe(false)
  })

  it('issue 36: a folder holding more than 20 fetched trust lists is rejected naming the first list past the bound; pem lists do not count', async () => {
    const keys = await generateKeyPair('ES256')
    const signer = await createCertificate({
      subjectPublicJwk: keys.publicJwk,
      subject: 'CN=Scheme Operator',
      issuerPrivateJwk: keys.privateJwk,
      validityDays: 30,
      ca: true,
    })
    const fetched = (n: number) => ({
      source: { type: 'etsi-tl', url: `https://lists.invalid/${n}.xml`, signerCertificates: [signer] },
    })
    const lists = (tenant: string, count: number) =>
      Object.fromEntries(
        Array.from({ length: count }, (_, n) => [
          `${tenant}/trust-lists/l${String(n).padStart(2, '0')}.json`,
          fetched(n),
        ]),
      )
    const within = random('tl')
    const pem = { source: { type: 'pem', certificates: [signer] } }
    const accepted = await run(tree({ ...lists(within, 20), [`${within}/trust-lists/pem.json`]: pem }))
    expect(accepted.tenants[0]?.issues).toStrictEqual([])
    expect(accepted.tenants[0]?.counts).toMatchObject({ trustLists: 21 })

    const over = random('tl')
    const rejected = await run(tree(lists(over, 21)))
    expect(rejected.tenants[0]?.status).toBe('rejected')
    expect(rejected.tenants[0]?.issues).toStrictEqual([
      {
        file: `${over}/trust-lists/l20.json`,
        path: '',
        message:
          'the tenant holds 20 fetched trust lists, the most it may (20); delete one or use a pem list',
      },
    ])
    expect(await tenantExists(over)).toBe(false)
  })

  it('is idempotent: a second run changes no keys and creates nothing twice', async () => {
    const { root, tenant } = exampleCopy()
    await run(root)
    const admin = await h.createClient(tenant, ['key:read', 'issuance:config'])
    const kid = (await h.app.inject({ url: '/api/key-chains/pid-signing', headers: admin.auth })).json()
      .activeKey.kid
    const again = await run(root)
    expect(again.ok).toBe(true)
    expect(again.tenants[0]?.counts?.keyChainsCreated).toBe(0)
    expect(
      (await h.app.inject({ url: '/api/key-chains/pid-signing', headers: admin.auth })).json().activeKey.kid,
    ).toBe(kid)
    expect(
      (await h.app.inject({ url: '/api/credentials?limit=100', headers: admin.auth })).json().items,
    ).toHaveLength(2)
  })

  it('spec §7: a version 1 credential file is rejected, every removed field named; the tenant is untouched', async () => {
    const tenant = random('v1')
    const root = tree({
      [`${tenant}/key-chains/k.json`]: keyChain,
      [`${tenant}/credentials/old.json`]: {
        ...credential('k'),
        claims: { name: 'x' },
        disclosureFrame: { _sd: ['name'] },
        schema: {},
        claimsWebhook: { url: 'https://hr.example.com' },
        notificationWebhook: { url: 'https://hooks.example.com' },
        keyId: 'k',
        certId: 'c',
        config: {
          format: 'mso_mdoc',
          docType: 'x',
          namespace: 'ns',
          claimsByNamespace: {},
          claimsMetadata: {},
        },
      },
    })
    const report = await run(root)
    expect(report.ok).toBe(false)
    const file = `${tenant}/credentials/old.json`
    expect(report.tenants[0]?.issues).toStrictEqual([
      { file, path: 'claims', message: expect.stringContaining('fields[].defaultValue') },
      { file, path: 'disclosureFrame', message: expect.stringContaining('fields[].disclosable') },
      { file, path: 'schema', message: expect.stringContaining('derived') },
      { file, path: 'claimsWebhook', message: expect.stringContaining('attributeProviderId') },
      { file, path: 'notificationWebhook', message: expect.stringContaining('webhookEndpointId') },
      { file, path: 'keyId', message: expect.stringContaining('keyChainId') },
      { file, path: 'certId', message: expect.stringContaining('keyChainId') },
      { file, path: 'config.namespace', message: expect.stringContaining('fields[].namespace') },
      {
        file,
        path: 'config.claimsByNamespace',
        message: expect.stringContaining('namespace and defaultValue'),
      },
      { file, path: 'config.claimsMetadata', message: expect.stringContaining('fields[].display') },
    ])
    expect(await tenantExists(tenant)).toBe(false)
  })

  it('spec §9.1: the 3.x keys/ and certs/ folders are rejected with a pointer to config:migrate', async () => {
    const tenant = random('three')
    const root = tree({
      [`${tenant}/keys/k.json`]: { id: 'k', algorithm: 'ES256', privateKeyPem: 'x' },
      [`${tenant}/certs/c.json`]: {},
    })
    const issues = (await run(root)).tenants[0]?.issues ?? []
    expect(issues.map((i) => i.file)).toStrictEqual([`${tenant}/certs`, `${tenant}/keys`])
    expect(issues[0]?.message).toContain('config:migrate')
  })

  it('spec §7: a vault key chain file without externalKeyId is rejected naming the field', async () => {
    const tenant = random('vault')
    const root = tree({ [`${tenant}/key-chains/v.json`]: { source: 'external', kmsProvider: 'vault' } })
    expect((await run(root)).tenants[0]?.issues).toStrictEqual([
      { file: `${tenant}/key-chains/v.json`, path: 'externalKeyId', message: expect.any(String) },
    ])
  })

  it('issue 40: a pkcs11 key chain file without externalKeyId, or self-signed on the token, is rejected naming the field', async () => {
    const tenant = random('hsm')
    const root = tree({
      [`${tenant}/key-chains/external.json`]: { source: 'external', kmsProvider: 'pkcs11' },
    })
    expect((await run(root)).tenants[0]?.issues).toStrictEqual([
      { file: `${tenant}/key-chains/external.json`, path: 'externalKeyId', message: expect.any(String) },
    ])
    const other = random('hsm')
    const selfSigned = tree({
      [`${other}/key-chains/made.json`]: {
        source: 'generate',
        kmsProvider: 'pkcs11',
        certificate: { mode: 'self-signed' },
      },
    })
    expect((await run(selfSigned)).tenants[0]?.issues).toStrictEqual([
      { file: `${other}/key-chains/made.json`, path: 'certificate.mode', message: expect.any(String) },
    ])
  })

  it('issue 11: a client secret changed after its 72nd byte is re-imported; an old-style hash is replaced', async () => {
    const tenant = random('long')
    const clientId = random('importer')
    const file = (clientSecret: string) =>
      tree({ [`${tenant}/clients/${clientId}.json`]: { clientSecret, roles: ['issuance:offer'] } })
    const first = `${'x'.repeat(72)}-first`
    const second = `${'x'.repeat(72)}-second`
    expect((await run(file(first))).ok).toBe(true)
    expect(await h.tokenFor(clientId, first)).toEqual(expect.any(String))
    expect((await run(file(second))).ok).toBe(true)
    expect(await h.tokenFor(clientId, second)).toEqual(expect.any(String))
    await expect(h.tokenFor(clientId, first)).rejects.toThrow(/401/)

    // A hash as earlier versions wrote it: bcrypt of the secret itself (cost 4, made for this test).
    const legacy = '$2b$04$EqJ5Hrl9d.7MrjZO/Vje4eucCR1sRSyr7HBFndaSnKwLp94ZNqTtG'
    await h.database.db.execute(sql`update clients set secret_hash = ${legacy} where client_id = ${clientId}`)
    expect(await h.tokenFor(clientId, 'legacy-imported-secret-0123')).toEqual(expect.any(String))
    expect((await run(file('legacy-imported-secret-0123'))).ok).toBe(true)
    const [row] = await queryRows<{ secret_hash: string }>(
      h.database.db,
      sql`select secret_hash from clients where client_id = ${clientId}`,
    )
    expect(row?.secret_hash.startsWith('$bcrypt-sha256$')).toBe(true)
    expect(await h.tokenFor(clientId, 'legacy-imported-secret-0123')).toEqual(expect.any(String))
  })

  it('a placeholder without value or default rejects the file, naming the variable', async () => {
    const tenant = random('ph')
    const root = tree({
      [`${tenant}/clients/c.json`]: '{"clientSecret": "${MISSING_SECRET}", "roles": ["issuance:offer"]}',
    })
    expect((await run(root)).tenants[0]?.issues).toContainEqual({
      file: `${tenant}/clients/c.json`,
      path: '',
      message: '${MISSING_SECRET} is not set and has no default',
    })
  })

  it('one transaction per tenant: a failure while applying rolls the whole tenant back; other tenants import', async () => {
    const bad = random('bad')
    const good = random('good')
    const root = tree({
      [`${bad}/key-chains/k.json`]: keyChain,
      [`${bad}/credentials/c.json`]: credential('no-such-chain'),
      [`${good}/key-chains/k.json`]: keyChain,
      [`${good}/credentials/c.json`]: credential('k'),
    })
    const report = await run(root)
    expect(report.tenants.map((t) => [t.tenant, t.status]).sort()).toStrictEqual(
      [
        [bad, 'rejected'],
        [good, 'imported'],
      ].sort(),
    )
    expect(report.tenants.find((t) => t.tenant === bad)?.issues).toStrictEqual([
      {
        file: `${bad}/credentials/c.json`,
        path: 'keyChainId',
        message: "no keyChain 'no-such-chain' in this tenant",
      },
    ])
    // Neither the tenant nor its valid key chain was written.
    expect(await tenantExists(bad)).toBe(false)
    expect(await tenantExists(good)).toBe(true)
  })

  it('S-105: configurations naming another tenant’s attribute provider or webhook endpoint are rejected; that tenant is not written', async () => {
    const owner = random('owner')
    const intruder = random('intruder')
    const imported = await run(
      tree({
        [`${owner}/attribute-providers/shared-provider.json`]: { url: 'https://attributes.example.com' },
        [`${owner}/webhook-endpoints/shared-hook.json`]: { url: 'https://hooks.example.com' },
      }),
    )
    expect(imported.ok).toBe(true)
    const report = await run(
      tree({
        [`${intruder}/key-chains/k.json`]: keyChain,
        [`${intruder}/credentials/c.json`]: {
          ...credential('k'),
          attributeProviderId: 'shared-provider',
          webhookEndpointId: 'shared-hook',
        },
        [`${intruder}/presentations/p.json`]: {
          keyChainId: 'k',
          dcqlQuery: {
            credentials: [{ id: 'x', format: 'dc+sd-jwt', meta: { vct_values: ['urn:example:x'] } }],
          },
          webhookEndpointId: 'shared-hook',
        },
      }),
    )
    expect(report.tenants).toStrictEqual([
      {
        tenant: intruder,
        status: 'rejected',
        issues: [
          {
            file: `${intruder}/credentials/c.json`,
            path: 'attributeProviderId',
            message: "no attributeProvider 'shared-provider' in this tenant",
          },
          {
            file: `${intruder}/credentials/c.json`,
            path: 'webhookEndpointId',
            message: "no webhookEndpoint 'shared-hook' in this tenant",
          },
          {
            file: `${intruder}/presentations/p.json`,
            path: 'webhookEndpointId',
            message: "no webhookEndpoint 'shared-hook' in this tenant",
          },
        ],
      },
    ])
    expect(await tenantExists(intruder)).toBe(false)
  })

  it('issue 11: a presentation file with a javascript: or http redirectUri is rejected naming the file and field', async () => {
    const tenant = random('redirect')
    const dcqlQuery = {
      credentials: [{ id: 'x', format: 'dc+sd-jwt', meta: { vct_values: ['urn:example:x'] } }],
    }
    const report = await run(
      tree({
        [`${tenant}/key-chains/k.json`]: keyChain,
        [`${tenant}/presentations/script.json`]: {
          keyChainId: 'k',
          dcqlQuery,
          redirectUri: 'javascript:alert(1)',
        },
        [`${tenant}/presentations/plain.json`]: {
          keyChainId: 'k',
          dcqlQuery,
          redirectUri: 'http://rp.example.com/',
        },
      }),
    )
    expect(report.tenants[0]?.status).toBe('rejected')
    expect(report.tenants[0]?.issues).toStrictEqual([
      {
        file: `${tenant}/presentations/plain.json`,
        path: 'redirectUri',
        message: "must use https, not 'http'",
      },
      {
        file: `${tenant}/presentations/script.json`,
        path: 'redirectUri',
        message: "must use https, not 'javascript'",
      },
    ])
    expect(await tenantExists(tenant)).toBe(false)
  })

  it('F-03 / SD-JWT VC §3.2.2.2: a credential file with a disclosable vct is rejected naming the file and field', async () => {
    const tenant = random('reserved')
    const report = await run(
      tree({
        [`${tenant}/key-chains/k.json`]: keyChain,
        [`${tenant}/credentials/pid.json`]: {
          ...credential('k'),
          fields: [
            { path: ['name'], type: 'string', defaultValue: 'x' },
            { path: ['vct'], type: 'string', disclosable: true },
          ],
        },
      }),
    )
    expect(report.tenants[0]?.status).toBe('rejected')
    expect(report.tenants[0]?.issues).toStrictEqual([
      {
        file: `${tenant}/credentials/pid.json`,
        path: 'fields.1.disclosable',
        message: "'vct' must not be selectively disclosable (SD-JWT VC §3.2.2.2)",
      },
    ])
    expect(await tenantExists(tenant)).toBe(false)
  })

  it('S-129 / RFC 9901 §4.2: a credential file with a nested field named _sd is rejected naming the file and field', async () => {
    const tenant = random('sd-names')
    const report = await run(
      tree({
        [`${tenant}/key-chains/k.json`]: keyChain,
        [`${tenant}/credentials/pid.json`]: {
          ...credential('k'),
          fields: [
            { path: ['name'], type: 'string', defaultValue: 'x' },
            { path: ['address', '_sd'], type: 'array' },
          ],
        },
      }),
    )
    expect(report.tenants[0]?.status).toBe('rejected')
    expect(report.tenants[0]?.issues).toStrictEqual([
      {
        file: `${tenant}/credentials/pid.json`,
        path: 'fields.1.path',
        message: "'_sd' is an SD-JWT structure name (RFC 9901 §4.2); claims cannot use it",
      },
    ])
    expect(await tenantExists(tenant)).toBe(false)
  })

  it('ISO 18013-5 Annex B.1: an mso_mdoc credential file whose key chain certificate names no country is rejected naming the file', async () => {
    const tenant = random('country')
    const report = await run(
      tree({
        [`${tenant}/key-chains/k.json`]: { source: 'generate', certificate: { subject: 'CN=No Country' } },
        [`${tenant}/credentials/mdl.json`]: {
          config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
          fields: [{ path: ['family_name'], type: 'string', namespace: 'org.iso.18013.5.1' }],
          keyChainId: 'k',
        },
      }),
    )
    expect(report.tenants[0]?.status).toBe('rejected')
    expect(report.tenants[0]?.issues).toStrictEqual([
      {
        file: `${tenant}/credentials/mdl.json`,
        path: 'keyChainId',
        message:
          "mso_mdoc needs a country (C=) in the certificate subject and issuer (ISO 18013-5 Annex B.1); key chain 'k' has none",
      },
    ])
    expect(await tenantExists(tenant)).toBe(false)
  })

  it('F-02 / HAIP §6.1.1: a credential file with dpop `required` on a self-signed key chain is rejected naming the file and field', async () => {
    const tenant = random('haip-self')
    const report = await run(
      tree({
        [`${tenant}/key-chains/k.json`]: { source: 'generate', certificate: { mode: 'self-signed' } },
        [`${tenant}/credentials/pid.json`]: { ...credential('k'), dpop: 'required' },
      }),
    )
    expect(report.tenants[0]?.status).toBe('rejected')
    expect(report.tenants[0]?.issues).toMatchObject([
      {
        file: `${tenant}/credentials/pid.json`,
        path: 'dpop',
        message: expect.stringContaining("self-signed certificate of key chain 'k'"),
      },
    ])
    expect(await tenantExists(tenant)).toBe(false)
  })

  it('OpenID4VCI §5: login-providers/ are imported before credentials that log their holder in; the secret is never returned', async () => {
    const tenant = random('login')
    const root = tree({
      [`${tenant}/key-chains/k.json`]: keyChain,
      [`${tenant}/login-providers/idp.json`]: {
        issuer: 'https://login.example.com',
        clientId: 'issuer',
        clientSecret: 'imported-secret-value',
      },
      [`${tenant}/credentials/staff.json`]: {
        ...credential('k'),
        userAuthentication: { loginProviderId: 'idp', claims: { name: 'name' } },
      },
    })
    const result = await run(root)
    expect(result.ok).toBe(true)
    expect(result.tenants[0]?.counts?.loginProviders).toBe(1)
    const admin = await h.createClient(tenant, ['issuance:config'])
    const provider = (await h.app.inject({ url: '/api/login-providers/idp', headers: admin.auth })).json()
    expect(provider).toMatchObject({ id: 'idp', hasClientSecret: true, scopes: ['openid'] })
    expect(JSON.stringify(provider)).not.toContain('imported-secret-value')
    expect(
      (await h.app.inject({ url: '/api/credentials/staff', headers: admin.auth })).json().userAuthentication,
    ).toStrictEqual({ loginProviderId: 'idp', claims: { name: 'name' } })
  })

  it('OpenID4VCI §5: a login provider file with an internal or http issuer is rejected naming the file and issuer; the tenant is not written', async () => {
    const tenant = random('badidp')
    const report = await run(
      tree({
        [`${tenant}/login-providers/internal.json`]: { issuer: 'https://10.1.2.3/realms/x', clientId: 'c' },
        [`${tenant}/login-providers/plain.json`]: { issuer: 'http://login.example.com', clientId: 'c' },
      }),
    )
    expect(report.tenants[0]?.status).toBe('rejected')
    expect(report.tenants[0]?.issues).toStrictEqual([
      {
        file: `${tenant}/login-providers/internal.json`,
        path: 'issuer',
        message: expect.stringContaining('10.1.2.3'),
      },
      { file: `${tenant}/login-providers/plain.json`, path: 'issuer', message: 'must use https' },
    ])
    expect(await tenantExists(tenant)).toBe(false)
  })

  it('security: re-importing a login provider with another issuer but no clientSecret is rejected naming clientSecret; the stored secret stays with its issuer', async () => {
    const tenant = random('moveidp')
    const file = (body: Record<string, unknown>) => tree({ [`${tenant}/login-providers/idp.json`]: body })
    const first = {
      issuer: 'https://login.example.com',
      clientId: 'issuer',
      clientSecret: 'first-secret-value',
    }
    expect((await run(file(first))).ok).toBe(true)
    const { clientSecret: _s, ...withoutSecret } = first
    expect((await run(file(withoutSecret))).ok).toBe(true)
    const moved = await run(file({ ...withoutSecret, issuer: 'https://attacker.example.com' }))
    expect(moved.tenants[0]?.issues).toStrictEqual([
      {
        file: `${tenant}/login-providers/idp.json`,
        path: 'clientSecret',
        message: expect.stringContaining('issuer or clientId changed'),
      },
    ])
    const admin = await h.createClient(tenant, ['issuance:config'])
    expect(
      (await h.app.inject({ url: '/api/login-providers/idp', headers: admin.auth })).json(),
    ).toMatchObject({ issuer: 'https://login.example.com', hasClientSecret: true })
    expect((await run(file({ ...withoutSecret, clientSecret: null }))).ok).toBe(true)
    expect(
      (await h.app.inject({ url: '/api/login-providers/idp', headers: admin.auth })).json().hasClientSecret,
    ).toBe(false)
  })

  it('tenant.json sets the tenant settings of the API (presentationRetention, credentialEncryption); an unknown key or value rejects the tenant naming it', async () => {
    const tenant = random('settings')
    const settings = (body: Record<string, unknown>) => tree({ [`${tenant}/tenant.json`]: body })
    const imported = await run(
      settings({
        name: 'Settings',
        presentationRetention: 'drop-after-delivery',
        credentialEncryption: 'required',
      }),
    )
    expect(imported.ok).toBe(true)
    const read = async () =>
      (
        await h.app.inject({
          url: `/api/tenants/${tenant}`,
          headers: { authorization: `Bearer ${await h.tokenFor(h.root.clientId, h.root.clientSecret)}` },
        })
      ).json()
    expect(await read()).toMatchObject({
      name: 'Settings',
      description: null,
      presentationRetention: 'drop-after-delivery',
      credentialEncryption: 'required',
    })
    // Applied to an existing tenant too; absent keys leave a setting as it is.
    expect((await run(settings({ credentialEncryption: 'optional' }))).ok).toBe(true)
    expect(await read()).toMatchObject({
      name: 'Settings',
      presentationRetention: 'drop-after-delivery',
      credentialEncryption: 'optional',
    })
    const refused = await run(settings({ name: 'X', colour: 'red', credentialEncryption: 'always' }))
    expect(refused.tenants[0]?.status).toBe('rejected')
    expect(refused.tenants[0]?.issues).toStrictEqual([
      { file: `${tenant}/tenant.json`, path: 'credentialEncryption', message: expect.any(String) },
      { file: `${tenant}/tenant.json`, path: 'colour', message: "unknown field 'colour'" },
    ])
    expect((await read()).name).toBe('Settings')
  })

  it('issue 23 item 8: a credential file without keyChainId gets the tenant’s default key chain: tenant.json defaultKeyChainId, else `default` made on first need; an unknown defaultKeyChainId rejects the tenant naming it', async () => {
    const { keyChainId: _, ...noKeyChain } = credential('unused')
    const named = random('dflt')
    const imported = await run(
      tree({
        [`${named}/tenant.json`]: { defaultKeyChainId: 'signing' },
        [`${named}/key-chains/signing.json`]: keyChain,
        [`${named}/credentials/badge.json`]: noKeyChain,
      }),
    )
    expect(imported.ok, JSON.stringify(imported)).toBe(true)
    const stored = (tenant: string, id: string) =>
      createCredentialConfigRepository(h.database.db, tenant).get(id)
    expect((await stored(named, 'badge'))?.keyChainId).toBe('signing')

    const made = random('dflt')
    const second = await run(tree({ [`${made}/credentials/badge.json`]: noKeyChain }))
    expect(second.ok, JSON.stringify(second)).toBe(true)
    expect(second.tenants[0]).toMatchObject({ status: 'imported' })
    expect((await stored(made, 'badge'))?.keyChainId).toBe('default')
    expect((await createTenantRepository(h.database.db).get(made))?.defaultKeyChainId).toBe('default')

    const unknown = random('dflt')
    const refused = await run(
      tree({
        [`${unknown}/tenant.json`]: { defaultKeyChainId: 'missing' },
        [`${unknown}/credentials/badge.json`]: noKeyChain,
      }),
    )
    expect(refused.tenants[0]?.issues).toStrictEqual([
      {
        file: `${unknown}/tenant.json`,
        path: 'defaultKeyChainId',
        message: "no key chain 'missing' in this tenant (nor in key-chains/)",
      },
    ])
    expect(await tenantExists(unknown)).toBe(false)
  })

  it('issue 43: tenant.json country names C= in the default key chain made for an mso_mdoc file without keyChainId; without a country the tenant is rejected naming the fix', async () => {
    // Spec §2.1–2.3: the minimal body, `id`, `config` (format mso_mdoc, docType), `fields`.
    const mdl = {
      id: 'mdl',
      config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
      fields: [{ path: ['family_name'], type: 'string', namespace: 'org.iso.18013.5.1' }],
    }
    const stated = random('cty')
    const imported = await run(
      tree({ [`${stated}/tenant.json`]: { country: 'SE' }, [`${stated}/credentials/mdl.json`]: mdl }),
    )
    expect(imported.ok, JSON.stringify(imported)).toBe(true)
    expect((await createTenantRepository(h.database.db).get(stated))?.country).toBe('SE')
    expect((await createCredentialConfigRepository(h.database.db, stated).get('mdl'))?.keyChainId).toBe(
      'default',
    )

    const none = random('cty')
    const refused = await run(tree({ [`${none}/credentials/mdl.json`]: mdl }))
    expect(refused.tenants[0]?.issues).toStrictEqual([
      {
        file: `${none}/credentials/mdl.json`,
        path: 'keyChainId',
        message: expect.stringContaining(`set it (\`country\` in PATCH /api/tenants/${none} or tenant.json`),
      },
    ])
    expect(await tenantExists(none)).toBe(false)
  })

  describe('issue 39: federation/membership.json is the tenant’s OpenID Federation membership', () => {
    const superior = 'https://intermediate.federation.test'
    const anchor = {
      entityId: 'https://anchor.federation.test',
      jwks: { keys: [{ kty: 'EC', crv: 'P-256', kid: 'anchor-1', x: 'x', y: 'y' }] },
    }
    // Made by the test with jose: the import reads the claims; whoever resolves a chain checks signatures.
    const trustMark = async (sub: string, typ = 'trust-mark+jwt') =>
      new SignJWT({ trust_mark_type: 'https://marks.federation.test/rp' })
        .setProtectedHeader({ alg: 'HS256', typ })
        .setIssuer(anchor.entityId)
        .setSubject(sub)
        .setIssuedAt()
        .sign(new TextEncoder().encode('a test key of thirty-two bytes!!'))
    const membership = async (tenant: string, keyChainId = 'federation') => ({
      keyChainId,
      authorityHints: [superior],
      trustAnchors: [anchor],
      trustMarks: [
        {
          trustMarkType: 'https://marks.federation.test/rp',
          trustMark: await trustMark(`https://issuer.test/verifiers/${tenant}`),
        },
      ],
      lifetimeSeconds: 7200,
    })

    it('imports the membership with its key chain from the same folder; the API reads it; a second run changes nothing', async () => {
      const tenant = random('fed')
      const root = tree({
        [`${tenant}/key-chains/federation.json`]: keyChain,
        [`${tenant}/federation/membership.json`]: await membership(tenant),
      })
      const report = await run(root)
      expect(report.ok, JSON.stringify(report)).toBe(true)
      expect(report.tenants[0]?.counts?.federation).toBe(1)
      const admin = await h.createClient(tenant, ['registrar:manage'])
      const read = await h.app.inject({ url: '/api/federation', headers: admin.auth })
      expect(read.statusCode).toBe(200)
      expect(read.json()).toMatchObject({
        keyChainId: 'federation',
        authorityHints: [superior],
        trustAnchors: [anchor],
        lifetimeSeconds: 7200,
        entityIds: {
          issuer: `https://issuer.test/issuers/${tenant}`,
          verifier: `https://issuer.test/verifiers/${tenant}`,
        },
      })
      expect((await run(root)).ok).toBe(true)
    })

    it('rejects a membership whose key chain signs a credential of the folder, a trust mark about another entity, and any other file in federation/, naming file and field; the tenant is not written', async () => {
      const tenant = random('fedbad')
      const root = tree({
        [`${tenant}/key-chains/shared.json`]: keyChain,
        [`${tenant}/credentials/pid.json`]: credential('shared'),
        [`${tenant}/federation/membership.json`]: await membership(tenant, 'shared'),
      })
      const report = await run(root)
      expect(report.tenants[0]?.status).toBe('rejected')
      expect(report.tenants[0]?.issues.map((i) => `${i.file}:${i.path}`)).toStrictEqual([
        `${tenant}/federation/membership.json:keyChainId`,
      ])
      expect(await tenantExists(tenant)).toBe(false)

      const other = random('fedmark')
      const marked = tree({
        [`${other}/key-chains/federation.json`]: keyChain,
        [`${other}/federation/membership.json`]: {
          ...(await membership(other)),
          trustMarks: [
            {
              trustMarkType: 'https://marks.federation.test/rp',
              trustMark: await trustMark('https://x.test/rp'),
            },
          ],
        },
      })
      expect((await run(marked)).tenants[0]?.issues.map((i) => `${i.file}:${i.path}`)).toStrictEqual([
        `${other}/federation/membership.json:trustMarks.0.trustMark`,
      ])
      const third = random('fedodd')
      const odd = tree({ [`${third}/federation/anchors.json`]: {} })
      expect((await run(odd)).tenants[0]?.issues.map((i) => `${i.file}:${i.path}`)).toStrictEqual([
        `${third}/federation/anchors.json:`,
      ])
    })

    it('upgrade:check names what a federation file lacks (authorityHints, keyChainId) and a trust mark that is not one', async () => {
      const [lacking, marked] = [random('fedcheck'), random('fedmark')].sort()
      const { keyChainId: _k, authorityHints: _a, ...rest } = await membership(lacking as string)
      const root = tree({
        [`${lacking}/federation/membership.json`]: rest,
        [`${marked}/key-chains/federation.json`]: keyChain,
        [`${marked}/federation/membership.json`]: {
          ...(await membership(marked as string)),
          trustMarks: [
            {
              trustMarkType: 'https://marks.federation.test/rp',
              trustMark: await trustMark(`https://issuer.test/verifiers/${marked}`, 'JWT'),
            },
          ],
        },
      })
      const findings = await upgradeCheck({ dir: root, env: {}, outbound: outboundPolicy(h.config) })
      expect(findings.map((finding) => finding.split(':')[0])).toStrictEqual([
        `config ${lacking}/federation/membership.json keyChainId`,
        `config ${lacking}/federation/membership.json authorityHints`,
        `config ${marked}/federation/membership.json trustMarks.0.trustMark`,
      ])
      expect(findings[2]).toContain('not a trust mark JWT (typ trust-mark+jwt)')
    })
  })

  it('refuses unknown fields and folders, and an id that differs from the file name', async () => {
    const tenant = random('odd')
    const root = tree({
      [`${tenant}/widgets/w.json`]: {},
      [`${tenant}/key-chains/a.json`]: { ...keyChain, id: 'b', colour: 'red' },
    })
    const paths = (await run(root)).tenants[0]?.issues.map((i) => `${i.file}:${i.path}`)
    expect(paths).toStrictEqual([
      `${tenant}/widgets:`,
      `${tenant}/key-chains/a.json:id`,
      `${tenant}/key-chains/a.json:colour`,
    ])
  })

  it.runIf(testDatabase.name === 'postgres')(
    'pods importing at once: both succeed, each key chain exists once',
    async () => {
      const { root, tenant } = exampleCopy()
      const second = await testDatabase.open()
      try {
        const [a, b] = await Promise.all([
          run(root),
          importConfigDir(importDeps(h.config, second.db, h.keys), root, {}),
        ])
        expect([a.ok, b.ok]).toStrictEqual([true, true])
        expect(
          (a.tenants[0]?.counts?.keyChainsCreated ?? 0) + (b.tenants[0]?.counts?.keyChainsCreated ?? 0),
        ).toBe(2)
        const admin = await h.createClient(tenant, ['key:read'])
        expect(
          (await h.app.inject({ url: '/api/key-chains', headers: admin.auth })).json().items,
        ).toHaveLength(2)
      } finally {
        await second.close()
      }
    },
  )

  describe('issue 25: trustAnchors in config files become pem trust lists', () => {
    const dcqlQuery = {
      credentials: [{ id: 'x', format: 'dc+sd-jwt', meta: { vct_values: ['urn:example:x'] } }],
    }
    const root = async (subject: string) => {
      const keys = await generateKeyPair('ES256')
      return createCertificate({
        subjectPublicJwk: keys.publicJwk,
        subject,
        issuerPrivateJwk: keys.privateJwk,
        validityDays: 30,
        ca: true,
      })
    }
    const folder = async (tenant: string) => {
      const [one, two, wallets] = [await root('CN=One'), await root('CN=Two'), await root('CN=Wallets')]
      return {
        ids: { issuers: anchorsTrustListId([one, two]), wallets: anchorsTrustListId([wallets]) },
        files: {
          [`${tenant}/key-chains/k.json`]: keyChain,
          [`${tenant}/presentations/a.json`]: { keyChainId: 'k', dcqlQuery, trustAnchors: [one, two] },
          // The same set in another order and with a trailing newline: the same list.
          [`${tenant}/presentations/b.json`]: { keyChainId: 'k', dcqlQuery, trustAnchors: [`${two}\n`, one] },
          [`${tenant}/wallet-providers/w.json`]: { name: 'W', trustAnchors: [wallets] },
        } as Record<string, unknown>,
      }
    }
    const state = async (tenant: string) => {
      const admin = await h.createClient(tenant, ['presentation:config', 'issuance:config'])
      const get = async (url: string) => (await h.app.inject({ url, headers: admin.auth })).json()
      const lists = (await get('/api/trust-lists')).items as { id: string; source: unknown }[]
      return {
        lists: lists.map((list) => ({ id: list.id, source: list.source })),
        a: (await get('/api/presentations/a')).trustListIds,
        b: (await get('/api/presentations/b')).trustListIds,
        w: (await get('/api/wallet-providers/w')).trustListIds,
        anchors: [await get('/api/presentations/a'), await get('/api/wallet-providers/w')].map(
          (body) => body.trustAnchors,
        ),
      }
    }

    it('import: one list per set, named in trustListIds, never returned as trustAnchors; a second run changes nothing', async () => {
      const tenant = random('anchors')
      const { ids, files } = await folder(tenant)
      const report = await run(tree(files))
      expect(report.tenants[0]?.issues).toStrictEqual([])
      const imported = await state(tenant)
      expect(imported).toMatchObject({
        a: [ids.issuers],
        b: [ids.issuers],
        w: [ids.wallets],
        anchors: [undefined, undefined],
      })
      expect(imported.lists.map((list) => list.id).sort()).toStrictEqual([ids.issuers, ids.wallets].sort())
      expect((await run(tree(files))).ok).toBe(true)
      expect(await state(tenant)).toStrictEqual(imported)
    })

    it('config:migrate writes trust-lists/anchors-<hash>.json and trustListIds; twice changes nothing; its import equals the direct one', async () => {
      const tenant = random('anchors')
      const { ids, files } = await folder(tenant)
      const source = tree(files)
      const out = join(tree({}), 'v1')
      const result = migrateConfigDir(source, out)
      expect(result.written).toContain(`${tenant}/trust-lists/${ids.issuers}.json`)
      expect(result.changes).toContain(
        `${tenant}/presentations/b.json: trustAnchors → trust-lists/${ids.issuers}.json, named in trustListIds`,
      )
      const read = (path: string) => JSON.parse(readFileSync(join(out, tenant, path), 'utf8'))
      expect(read('presentations/a.json')).toStrictEqual({
        keyChainId: 'k',
        dcqlQuery,
        trustListIds: [ids.issuers],
      })
      expect(read(`trust-lists/${ids.wallets}.json`)).toMatchObject({
        id: ids.wallets,
        source: { type: 'pem' },
      })
      const again = join(tree({}), 'v2')
      const second = migrateConfigDir(out, again)
      expect(second.changes).toStrictEqual([])
      expect(second.written.sort()).toStrictEqual(result.written.sort())
      for (const file of result.written)
        expect(readFileSync(join(again, file), 'utf8')).toBe(readFileSync(join(out, file), 'utf8'))
      expect((await run(out)).tenants[0]?.issues).toStrictEqual([])
      const migrated = await state(tenant)
      expect(migrated).toMatchObject({ a: [ids.issuers], b: [ids.issuers], w: [ids.wallets] })
      // The original folder (anchors) imports onto it without a change.
      expect((await run(source)).ok).toBe(true)
      expect(await state(tenant)).toStrictEqual(migrated)
    })
  })
})
