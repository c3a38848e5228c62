import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { issueTestCertificate } from '@credential-service/crypto/testing'
import {
  createCredentialConfigRepository,
  createPresentationConfigRepository,
  createTenantRepository,
} from '@credential-service/db-schema'
import { TEST_MASTER_SECRET, type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import {
  importConfigDir,
  importDeps,
  migrateConfigDir,
  parseManagementConfig,
} from '@credential-service/management'
import { createKeyRuntime } from '@credential-service/server-kit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// Issue 23 item 8: a configuration folder laid out as the peer product (EUDIPLO) lays it out
// (`<tenant>/info.json`, `issuance/credentials/`, `issuance/issuance.json`, `presentation/`,
// `key-chains/`, `clients/`) loads through `config:migrate` into our layout (spec §9.2 mapping).

const scratch: string[] = []
const temp = () => {
  const dir = mkdtempSync(join(tmpdir(), 'peer-migrate-'))
  scratch.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})
const writeJson = (path: string, body: unknown) => {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, JSON.stringify(body, null, 2))
}
const read = (path: string) => JSON.parse(readFileSync(path, 'utf8'))

/** Private JWK + a certificate naming a country (mdoc, ISO 18013-5 Annex B.1), as the peer stores them. */
let signing: { key: Record<string, unknown>; crt: string[] }
let access: { key: Record<string, unknown>; crt: string[] }
beforeAll(async () => {
  const make = async (subject: string) => {
    const cert = await issueTestCertificate({ subject, dnsNames: ['issuer.test'] })
    return { key: { ...cert.keys.privateJwk, kid: 'peer-kid' }, crt: [cert.pem] }
  }
  signing = await make('C=DE, CN=Peer Demo Signing')
  access = await make('C=DE, CN=Peer Demo Access')
})

const DCQL = {
  credentials: [
    {
      id: 'pid',
      format: 'dc+sd-jwt',
      meta: { vct_values: ['urn:eudi:pid:de:1'] },
      claims: [{ path: ['address', 'locality'] }],
    },
  ],
}

/** A peer tenant folder: tenant info, SD-JWT VC + mdoc credentials, a presentation, a client. */
function peerFolder(tenant: string, extra: (dir: string) => void = () => {}): string {
  const root = temp()
  const dir = join(root, tenant)
  writeJson(join(dir, 'info.json'), { name: 'Peer Demo', description: 'Written as EUDIPLO writes it' })
  writeJson(join(dir, 'key-chains', 'signing.json'), {
    id: 'signing',
    description: 'key for signing',
    usageType: 'attestation',
    key: signing.key,
    kmsProvider: 'db',
    crt: signing.crt,
  })
  writeJson(join(dir, 'key-chains', 'access.json'), {
    id: 'access',
    description: 'Access Certificate',
    usageType: 'access',
    key: access.key,
    crt: access.crt,
  })
  writeJson(join(dir, 'issuance', 'issuance.json'), { authServers: [], batchSize: 5, dPopRequired: false })
  writeJson(join(dir, 'issuance', 'credentials', 'pid.json'), {
    id: 'pid',
    description: 'Personal ID',
    config: {
      format: 'dc+sd-jwt',
      scope: 'pid',
      display: [{ name: 'PID', locale: 'en-US' }],
      claimsMetadata: [{ path: ['given_name'], display: [{ name: 'Vorname', locale: 'de-DE' }] }],
    },
    claims: { given_name: 'ERIKA', address: { locality: 'KÖLN' } },
    disclosureFrame: { _sd: ['given_name', 'address'] },
    vct: 'urn:eudi:pid:de:1',
    keyBinding: true,
    statusManagement: true,
    lifeTime: 604800,
  })
  writeJson(join(dir, 'issuance', 'credentials', 'pid-mdoc.json'), {
    id: 'pid-mdoc',
    config: {
      format: 'mso_mdoc',
      docType: 'eu.europa.ec.eudi.pid.1',
      namespace: 'eu.europa.ec.eudi.pid.1',
      scope: 'pid-mdoc',
    },
    claims: { family_name: 'MUSTERMANN', age_over_18: true },
    keyBinding: true,
    lifeTime: 86400,
  })
  writeJson(join(dir, 'presentation', 'age-over-18.json'), {
    id: 'age-over-18',
    description: 'Proves 18+',
    dcql_query: DCQL,
    lifeTime: 300,
  })
  writeJson(join(dir, 'clients', 'backend.json'), {
    clientId: `${tenant}-backend`,
    secret: '${PEER_BACKEND_SECRET:peer-backend-secret-0123}',
    description: 'Backend',
    roles: ['issuance:manage', 'issuance:offer', 'presentation:request'],
  })
  extra(dir)
  return root
}

describe('config:migrate from the peer layout (EUDIPLO)', () => {
  it('info.json → tenant.json, key chains by usage, credentials (SD-JWT VC + mdoc) to version 2, presentation/ → presentations/, clients with our roles', () => {
    const tenant = 'peer-demo'
    const out = join(temp(), 'ours')
    const result = migrateConfigDir(peerFolder(tenant), out)
    const at = (path: string) => read(join(out, tenant, path))

    expect(at('tenant.json')).toStrictEqual({
      name: 'Peer Demo',
      description: 'Written as EUDIPLO writes it',
      defaultKeyChainId: 'signing',
    })
    expect(at('key-chains/signing.json')).toStrictEqual({
      source: 'import',
      id: 'signing',
      description: 'key for signing',
      privateKey: expect.objectContaining({ kty: 'EC', d: signing.key.d }),
      certificateChain: signing.crt,
    })
    expect(at('key-chains/signing.json').privateKey.kid).toBeUndefined()

    // spec §9.2: claims → defaultValue, disclosureFrame → disclosable, claimsMetadata → display.
    const pid = at('credentials/pid.json')
    expect(pid).toMatchObject({
      id: 'pid',
      description: 'Personal ID',
      config: { format: 'dc+sd-jwt', vct: 'urn:eudi:pid:de:1', scope: 'pid' },
      lifetimeSeconds: 604800,
      batchSize: 5,
      keyBinding: true,
      statusManagement: true,
    })
    expect(pid.keyChainId).toBeUndefined()
    expect(pid.config.claimsMetadata).toBeUndefined()
    expect(pid.fields).toStrictEqual([
      {
        path: ['given_name'],
        type: 'string',
        defaultValue: 'ERIKA',
        disclosable: true,
        display: [{ name: 'Vorname', locale: 'de-DE' }],
      },
      { path: ['address', 'locality'], type: 'string', defaultValue: 'KÖLN', disclosable: true },
    ])
    const mdoc = at('credentials/pid-mdoc.json')
    expect(mdoc.config).toStrictEqual({
      format: 'mso_mdoc',
      docType: 'eu.europa.ec.eudi.pid.1',
      scope: 'pid-mdoc',
    })
    expect(mdoc.fields).toStrictEqual([
      {
        path: ['family_name'],
        type: 'string',
        defaultValue: 'MUSTERMANN',
        namespace: 'eu.europa.ec.eudi.pid.1',
      },
      { path: ['age_over_18'], type: 'boolean', defaultValue: true, namespace: 'eu.europa.ec.eudi.pid.1' },
    ])
    expect(mdoc.lifetimeSeconds).toBe(86400)

    expect(at('presentations/age-over-18.json')).toStrictEqual({
      id: 'age-over-18',
      description: 'Proves 18+',
      dcqlQuery: DCQL,
      lifetimeSeconds: 300,
      keyChainId: 'access',
    })
    expect(at(`clients/${tenant}-backend.json`)).toStrictEqual({
      description: 'Backend',
      clientSecret: '${PEER_BACKEND_SECRET:peer-backend-secret-0123}',
      roles: ['issuance:config', 'issuance:offer', 'presentation:request'],
    })
    expect(result.changes).toEqual(
      expect.arrayContaining([
        `${tenant}/info.json: → tenant.json (name, description)`,
        expect.stringMatching(
          /^peer-demo\/issuance\/credentials\/pid\.json: → credentials\/pid\.json; vct → config\.vct; lifeTime → lifetimeSeconds/,
        ),
        `${tenant}/presentation/age-over-18.json: → presentations/age-over-18.json; dcql_query → dcqlQuery; keyChainId 'access'`,
      ]),
    )
  })

  it('issue 41: the peer’s authServers become auth-servers/ authorising every credential; one that is no URL stops the migration', () => {
    const tenant = 'peer-as'
    const input = peerFolder(tenant, (dir) =>
      writeJson(join(dir, 'issuance', 'issuance.json'), {
        authServers: ['https://login.peer.example/realms/wallets'],
        batchSize: 5,
        dPopRequired: false,
      }),
    )
    const out = join(temp(), 'ours')
    const result = migrateConfigDir(input, out)
    expect(read(join(out, tenant, 'auth-servers/as-1.json'))).toStrictEqual({
      id: 'as-1',
      issuer: 'https://login.peer.example/realms/wallets',
      credentialConfigurationIds: ['pid-mdoc', 'pid'],
    })
    expect(result.changes).toContain(
      `${tenant}/issuance/issuance.json: authServers.0 → auth-servers/as-1.json (JWT access tokens for every credential; check tokenCheck, mapping and claimsSource)`,
    )
    const bad = peerFolder('peer-as-bad', (dir) =>
      writeJson(join(dir, 'issuance', 'issuance.json'), { authServers: [42] }),
    )
    expect(() => migrateConfigDir(bad, join(temp(), 'ours'))).toThrow(
      'peer-as-bad/issuance/issuance.json: authServers.0: not an issuer URL',
    )
  })

  it('parts without an equivalent stop the migration, one line each naming file and field; nothing is written', () => {
    const tenant = 'peer-bad'
    const input = peerFolder(tenant, (dir) => {
      writeJson(join(dir, 'issuance', 'credentials', 'citizen.json'), {
        id: 'citizen',
        config: { format: 'dc+sd-jwt' },
        claims: { town: 'BERLIN' },
        vct: { name: 'Citizen' },
      })
      writeJson(join(dir, 'issuance', 'credentials', 'kyc.json'), {
        id: 'kyc',
        config: { format: 'dc+sd-jwt' },
        vct: 'urn:kyc',
        iaeActions: [{ type: 'openid4vp_presentation', presentationConfigId: 'pid' }],
      })
      writeJson(join(dir, 'issuance', 'status-lists', 'pid.json'), { id: 'pid' })
      writeJson(join(dir, 'trust-lists', 'list.json'), { id: 'list' })
      writeJson(join(dir, 'clients', 'ops.json'), { clientId: 'ops', secret: 'x', roles: ['tenants:manage'] })
      writeJson(join(dir, 'info.json'), { name: 'Peer', theme: 'dark' })
    })
    const out = join(temp(), 'ours')
    let message = ''
    try {
      migrateConfigDir(input, out)
    } catch (error) {
      message = (error as Error).message
    }
    expect(message.split('\n')).toStrictEqual([
      '6 part(s) cannot be migrated; nothing was written:',
      `  ${tenant}/trust-lists: not part of the layout this migration knows (trust lists, status lists and the like have no equivalent)`,
      `  ${tenant}/info.json: no equivalent for 'theme'`,
      `  ${tenant}/issuance/status-lists: no equivalent (status lists are made per credential with statusManagement)`,
      `  ${tenant}/issuance/credentials/citizen.json: vct is an object (type metadata hosted by the peer): give config.vct a type URI, and sign its metadata with POST /api/schema-metadata/sign`,
      `  ${tenant}/issuance/credentials/kyc.json: iaeActions (interactive authorization) have no equivalent`,
      `  ${tenant}/clients/ops.json: roles without an equivalent for a tenant client: tenants:manage`,
    ])
    expect(existsSync(out) ? readdirSync(out) : []).toStrictEqual([])
  })
})

describe.each(testDatabases())(
  'peer layout → config:migrate → import on $name',
  (testDatabase: TestDatabase) => {
    it('the migrated folder imports: the attestation key chain is the default and signs both credentials; the access one signs requests', async () => {
      const tenant = `peer-${crypto.randomUUID().slice(0, 8)}`
      const out = join(temp(), 'ours')
      migrateConfigDir(peerFolder(tenant), out)
      const database = await testDatabase.open()
      try {
        const config = parseManagementConfig({
          PUBLIC_URL: 'https://issuer.test',
          MASTER_SECRET: TEST_MASTER_SECRET,
          AUTH_CLIENT_ID: 'x-root',
          AUTH_CLIENT_SECRET: 'x-root-secret-0123456789',
        })
        const keys = createKeyRuntime({ config, db: database.db })
        const report = await importConfigDir(importDeps(config, database.db, keys), out, {})
        expect(report.ok, JSON.stringify(report)).toBe(true)
        const stored = await createTenantRepository(database.db).get(tenant)
        expect(stored).toMatchObject({ name: 'Peer Demo', defaultKeyChainId: 'signing' })
        const credentials = createCredentialConfigRepository(database.db, tenant)
        expect((await credentials.get('pid'))?.keyChainId).toBe('signing')
        expect((await credentials.get('pid-mdoc'))?.keyChainId).toBe('signing')
        const presentation = await createPresentationConfigRepository(database.db, tenant).get('age-over-18')
        expect(presentation?.keyChainId).toBe('access')
      } finally {
        await database.close()
      }
    }, 90_000)
  },
)
