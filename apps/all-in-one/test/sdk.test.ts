import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import {
  createManagementClient,
  ManagementApiError,
  SessionWaitError,
  type Tenant,
} from '@credential-service/sdk'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import { freePort } from './free-port'
import { startAllInOne } from './harness'
import { presentOverHttp, redeemOffer } from './wallet'

const run = promisify(execFile)
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url))
const VCT = 'urn:eudi:pid:1'

describe('SDK against a listening service', () => {
  let app: FastifyInstance
  let baseUrl: string
  let clientId: string
  let clientSecret: string

  beforeAll(async () => {
    const port = await freePort()
    baseUrl = `http://127.0.0.1:${port}`
    ;({
      app,
      rootClientId: clientId,
      rootSecret: clientSecret,
    } = await startAllInOne(testDatabases().at(-1) as TestDatabase, baseUrl, {
      // The scratch script's webhook receiver listens on 127.0.0.1 over plain http.
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    }))
    await app.listen({ host: '127.0.0.1', port })
  })
  afterAll(() => app.close())

  /** A client whose fetch counts the token requests it makes. */
  function countingClient(id = clientId, secret = clientSecret) {
    const counts = { token: 0, api: 0 }
    const client = createManagementClient({
      baseUrl,
      clientId: id,
      clientSecret: secret,
      fetch: (input, init) => {
        if (String(input).endsWith('/api/oauth2/token')) counts.token++
        else counts.api++
        return fetch(input, init)
      },
    })
    return { client, counts }
  }

  /** A new tenant and a client of it holding every tenant role but `tenant:*`. */
  async function tenantClient() {
    const root = createManagementClient({ baseUrl, clientId, clientSecret })
    const tenant = (await root.createTenant({ name: 'SDK test' })).id
    const created = await root.createClientOfTenant(tenant, {
      roles: [
        'key:manage',
        'issuance:config',
        'issuance:offer',
        'presentation:config',
        'presentation:request',
      ],
    })
    const client = createManagementClient({
      baseUrl,
      clientId: created.clientId,
      clientSecret: created.clientSecret,
    })
    return { tenant, client }
  }

  it('issue 13: tenants and clients end to end with typed results; `…OfTenant` names the tenant', async () => {
    const { client: root } = countingClient()
    const id = `sdk-${crypto.randomUUID().slice(0, 8)}`
    const tenant = await root.createTenant({ id, name: 'SDK tenant' })
    expectTypeOf(tenant).toEqualTypeOf<Tenant>()
    expect(tenant).toStrictEqual({
      id,
      name: 'SDK tenant',
      description: null,
      country: null,
      issuerDisplay: null,
      presentationRetention: 'keep',
      credentialEncryption: 'optional',
      defaultKeyChainId: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })

    const created = await root.createClientOfTenant(id, { roles: ['tenant:admin'] })
    const admin = createManagementClient({
      baseUrl,
      clientId: created.clientId,
      clientSecret: created.clientSecret,
    })
    const own = await admin.listClients({ limit: 10 })
    const { clientSecret: _shownOnce, ...stored } = created
    expect(own).toStrictEqual({ items: [stored], nextCursor: null })

    const rotated = await root.rotateClientSecretOfTenant(id, created.clientId)
    expect(rotated.clientSecret).not.toBe(created.clientSecret)
    await expect(root.deleteTenant(id)).resolves.toBeUndefined()
    const error = await root.getTenant(id).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ManagementApiError)
    expect(error).toMatchObject({
      status: 404,
      code: 'not_found',
      problem: { status: 404, code: 'not_found', instance: `/api/tenants/${id}` },
      body: undefined,
    })
  })

  it('issue 13: one token serves many calls, and concurrent first calls share one token request', async () => {
    const { client, counts } = countingClient()
    await Promise.all([client.listTenants(), client.listTenants(), client.getHealth(), client.listClients()])
    await client.listTenants()
    expect(counts).toStrictEqual({ token: 1, api: 5 })
  })

  it('issue 13: a token is requested again once it is about to expire', async () => {
    let clock = Date.now()
    let tokenRequests = 0
    const client = createManagementClient({
      baseUrl,
      clientId,
      clientSecret,
      now: () => clock,
      fetch: (input, init) => {
        if (String(input).endsWith('/api/oauth2/token')) tokenRequests++
        return fetch(input, init)
      },
    })
    await client.listTenants()
    clock += 3_540_000 // ACCESS_TOKEN_TTL_SECONDS defaults to one hour; 60 s before its end
    await client.listTenants()
    expect(tokenRequests).toBe(1)
    clock += 40_000 // within the last 30 s: renewed early
    await client.listTenants()
    expect(tokenRequests).toBe(2)
  })

  it('RFC 6749 §5.2: a refused client secret rejects with the OAuth error as code', async () => {
    const { client, counts } = countingClient(clientId, 'not-the-secret-at-all')
    const error = await client.listTenants().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ManagementApiError)
    expect(error).toMatchObject({
      status: 401,
      code: 'invalid_client',
      oauthError: { error: 'invalid_client' },
      problem: undefined,
      url: `${baseUrl}/api/oauth2/token`,
    })
    expect(counts).toStrictEqual({ token: 1, api: 0 })
  })

  it('RFC 9457: invalid input rejects with the problem’s code and its field errors', async () => {
    const { client } = await tenantClient()
    // @ts-expect-error spec §9.2: the removed `claims` field is refused by the types and by the API
    const error = await client.createCredentialConfig({ claims: {} }).catch((e: unknown) => e)
    expect(error).toMatchObject({ status: 400, code: 'invalid_input', problem: { code: 'invalid_input' } })
    expect((error as ManagementApiError).problem?.errors?.length).toBeGreaterThan(0)
  })

  it('issue 13: waitForSession gives up after timeoutMs with the last session read', async () => {
    const { tenant, client } = await tenantClient()
    await client.createKeyChain({ source: 'generate', id: 'keys' })
    await client.createCredentialConfig({
      id: 'pid',
      config: { format: 'dc+sd-jwt', vct: VCT },
      keyChainId: 'keys',
      fields: [{ path: ['given_name'], type: 'string' }],
    })
    const offer = await client.createOffer({
      credentialConfigurationIds: ['pid'],
      claims: { pid: { given_name: 'Erika' } },
    })
    const started = Date.now()
    const error = await client
      .waitForSession(offer.sessionId, {
        tenantId: tenant,
        until: 'completed',
        // Long enough for a first read on a loaded machine (300 ms was not, in a full run).
        timeoutMs: 1_500,
        intervalMs: 50,
      })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SessionWaitError)
    expect(error).toMatchObject({ reason: 'timeout', session: { id: offer.sessionId, status: 'offered' } })
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  describe('the packed SDK in a scratch project (plain npm, plain node)', () => {
    const sdkDir = join(repoRoot, 'packages/sdk')
    /** Each tool's tarball: npm ignores publishConfig, so the manifest itself must be publishable. */
    const packed = {} as Record<'npm' | 'pnpm', PackedSdk>
    let scratch: string

    /** Packs the SDK with `tool` into a new scratch project and installs the tarball there. */
    async function packAndInstall(tool: 'npm' | 'pnpm'): Promise<string> {
      const dir = mkdtempSync(join(tmpdir(), `sdk-${tool}-scratch-`))
      const pnpmVersion = JSON.parse(
        readFileSync(join(repoRoot, 'package.json'), 'utf8'),
      ).packageManager.split('@')[1]
      // Both run the package's prepack (the dist build).
      const [command, args] =
        tool === 'npm'
          ? ['npm', ['pack', '--pack-destination', dir]]
          : ['npx', ['-y', `pnpm@${pnpmVersion}`, 'pack', '--pack-destination', dir]]
      await run(command, args as string[], { cwd: sdkDir })
      const tarball = readdirSync(dir).find((name) => name.endsWith('.tgz')) as string
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({ name: 'scratch', private: true, type: 'module' }),
      )
      // The SDK has no dependencies, so the install needs no registry.
      await run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(dir, tarball)], { cwd: dir })
      const installed = join(dir, 'node_modules/@credential-service/sdk')
      packed[tool] = {
        dir,
        manifest: JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')),
        files: listFiles(installed),
      }
      return dir
    }

    beforeAll(async () => {
      // One after the other: both write packages/sdk/dist.
      await packAndInstall('pnpm')
      scratch = await packAndInstall('npm')
      writeFileSync(join(scratch, 'flow.mjs'), SCRATCH_FLOW)
      writeFileSync(join(scratch, 'require.cjs'), SCRATCH_REQUIRE)
      writeFileSync(join(scratch, 'consumer.ts'), SCRATCH_TYPES_ESM)
      writeFileSync(join(scratch, 'consumer.cts'), SCRATCH_TYPES_CJS)
      writeFileSync(join(scratch, 'tsconfig.json'), JSON.stringify(SCRATCH_TSCONFIG))
    }, 180_000)
    afterAll(() => {
      for (const { dir } of Object.values(packed)) rmSync(dir, { recursive: true, force: true })
    })

    it('issue 23 item 1: `npm pack` and `pnpm pack` give the same package: exports to dist, no sources', () => {
      expect(packed.npm.files).toStrictEqual(packed.pnpm.files)
      expect(packed.npm.manifest.exports).toStrictEqual(packed.pnpm.manifest.exports)
      expect(packed.npm.manifest.main).toBe('./dist/cjs/index.js')
      expect(packed.npm.files.filter((file) => file.startsWith('src/'))).toStrictEqual([])
      for (const file of [
        'dist/esm/index.js',
        'dist/esm/index.d.ts',
        'dist/cjs/index.js',
        'dist/cjs/index.d.ts',
      ])
        expect(packed.npm.files).toContain(file)
    })

    it('issue 23 item 1: the pnpm-packed SDK loads in plain Node too (import and require)', async () => {
      const { dir } = packed.pnpm
      writeFileSync(join(dir, 'require.cjs'), SCRATCH_REQUIRE)
      writeFileSync(join(dir, 'import.mjs'), SCRATCH_IMPORT)
      for (const script of ['require.cjs', 'import.mjs']) {
        const { stdout } = await run(process.execPath, [script], { cwd: dir })
        expect(JSON.parse(stdout)).toStrictEqual({
          createManagementClient: 'function',
          ManagementApiError: 'function',
        })
      }
    })

    it('issue 13: the tarball ships its README, dist and openapi.json, and depends on no package at all', () => {
      const installed = join(scratch, 'node_modules/@credential-service/sdk')
      const manifest = packed.npm.manifest as { exports: Record<string, unknown> } & Record<string, unknown>
      expect(manifest.dependencies).toBeUndefined()
      expect(manifest.peerDependencies).toBeUndefined()
      // Issue 42 item 6: nor devDependencies, whose workspace:* and catalog: no registry resolves,
      // from either tool; and the workspace manifest is back once packed.
      for (const tool of ['npm', 'pnpm'] as const) {
        expect(packed[tool].manifest.devDependencies).toBeUndefined()
        expect(JSON.stringify(packed[tool].manifest)).not.toMatch(/workspace:|catalog:/)
      }
      expect(JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8')).devDependencies).toBeDefined()
      // The workspace's own condition names sources that are not shipped; nobody else sets it.
      expect(manifest.exports['.']).toStrictEqual({
        '@credential-service/source': './src/index.ts',
        import: { types: './dist/esm/index.d.ts', default: './dist/esm/index.js' },
        require: { types: './dist/cjs/index.d.ts', default: './dist/cjs/index.js' },
      })
      expect(readdirSync(installed).sort()).toStrictEqual([
        'README.md',
        'dist',
        'openapi.json',
        'package.json',
      ])
      for (const dir of ['dist/esm', 'dist/esm/generated', 'dist/cjs']) {
        for (const file of readdirSync(join(installed, dir)).filter((name) => /\.(js|ts)$/.test(name)))
          expect(readFileSync(join(installed, dir, file), 'utf8')).not.toMatch(/@credential-service\//)
      }
    })

    it('issue 13: the shipped declarations type a consumer’s ESM and CommonJS code (moduleResolution nodenext)', async () => {
      const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
      const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: scratch }).catch(
        (error: { stdout: string }) => error,
      )
      expect(result.stdout).toBe('')
    }, 60_000)

    it('issue 23 item 1: every TypeScript example of the SDK README compiles against the packed package', async () => {
      const readme = readFileSync(join(sdkDir, 'README.md'), 'utf8')
      const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] as string)
      expect(blocks.length).toBeGreaterThanOrEqual(8)
      const imports = new Set<string>()
      // Each example in a function of its own (they reuse names); their imports at the top.
      const bodies = blocks.map((block, index) => {
        const lines = block.split('\n')
        for (const line of lines.filter((line) => line.startsWith('import '))) imports.add(line)
        const body = lines.filter((line) => !line.startsWith('import ')).join('\n  ')
        return `export async function example${index}() {\n  ${body}\n}`
      })
      writeFileSync(join(scratch, 'readme.ts'), [...imports, README_PRELUDE, ...bodies].join('\n'))
      writeFileSync(
        join(scratch, 'tsconfig.readme.json'),
        JSON.stringify({ ...SCRATCH_TSCONFIG, files: ['readme.ts'] }),
      )
      const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
      const result = await run(process.execPath, [tsc, '-p', 'tsconfig.readme.json'], { cwd: scratch }).catch(
        (error: { stdout: string }) => error,
      )
      expect(result.stdout).toBe('')
    }, 60_000)

    it('issue 13: CommonJS require() works too', async () => {
      const { stdout } = await run(process.execPath, ['require.cjs'], { cwd: scratch })
      expect(JSON.parse(stdout)).toStrictEqual({
        createManagementClient: 'function',
        ManagementApiError: 'function',
      })
    })

    it('issue 13, issue 23 item 2: a plain Node ESM script sets up a tenant, issues a credential and verifies a presentation (issueAndWait, verifyAndWait), and checks the result webhook with verifyWebhook', async () => {
      const child = spawn(process.execPath, ['flow.mjs'], {
        cwd: scratch,
        env: { ...process.env, BASE_URL: baseUrl, CLIENT_ID: clientId, CLIENT_SECRET: clientSecret },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stderr = ''
      child.stderr.on('data', (chunk) => {
        stderr += chunk
      })
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
      // biome-ignore lint/suspicious/noExplicitAny: the script's JSON lines are read loosely
      const steps: Record<string, any> = {}
      let wallet: Awaited<ReturnType<typeof redeemOffer>> | undefined
      for await (const line of createInterface({ input: child.stdout })) {
        const step = JSON.parse(line)
        steps[step.step] = step
        // The test process is the wallet; the script waits for it with waitForSession meanwhile.
        if (step.step === 'offer') {
          const credentialOffer = (await (await fetch(step.credentialOfferUri)).json()) as Record<
            string,
            unknown
          >
          wallet = await redeemOffer({ credentialOffer, configurationId: 'pid' })
        }
        if (step.step === 'request' && wallet) {
          const answer = await presentOverHttp({
            requestUri: step.requestUri,
            credentialQueryId: 'pid',
            ...wallet,
            disclose: { age_over_18: true },
          })
          expect(answer.status).toBe(200)
        }
      }
      expect(await exited, stderr).toBe(0)
      expect(steps.offer.offerUri).toMatch(/^openid-credential-offer:\/\//)
      expect(steps.request.authorizationRequestUri).toMatch(/^openid4vp:\/\//)
      expect(steps.done).toStrictEqual({
        step: 'done',
        issuance: { status: 'completed', issuedConfigurationIds: ['pid'] },
        presentation: {
          status: 'verified',
          claims: { pid: [expect.objectContaining({ vct: VCT, age_over_18: true })] },
        },
        notFound: { isManagementApiError: true, status: 404, code: 'not_found' },
        webhook: {
          event: {
            type: 'presentation.result',
            sessionId: steps.request.sessionId,
            status: 'verified',
          },
          tampered: 'bad_signature',
          replayedLater: 'stale',
          unsigned: 'missing_signature',
        },
      })
      expect(steps.done.presentation.claims.pid[0].given_name).toBeUndefined()
    }, 60_000)
  })
})

/** The integrator's script: only the published package, by name, in plain Node ESM. */
const SCRATCH_FLOW = `
import { createServer } from 'node:http'
import { createManagementClient, ManagementApiError, verifyWebhook } from '@credential-service/sdk'

const { BASE_URL: baseUrl, CLIENT_ID: clientId, CLIENT_SECRET: clientSecret } = process.env
const say = (step) => console.log(JSON.stringify(step))
const wait = { timeoutMs: 30000, intervalMs: 100 }

const root = createManagementClient({ baseUrl, clientId, clientSecret })
const tenant = await root.createTenant({ name: 'Scratch project' })
const admin = await root.createClientOfTenant(tenant.id, {
  roles: ['key:manage', 'issuance:config', 'issuance:offer', 'presentation:config', 'presentation:request'],
})
const api = createManagementClient({ baseUrl, clientId: admin.clientId, clientSecret: admin.clientSecret })

// The integrator's webhook receiver: it keeps each delivery's raw body and headers.
const deliveries = []
const receiver = createServer((req, res) => {
  let body = ''
  req.on('data', (chunk) => { body += chunk })
  req.on('end', () => {
    deliveries.push({ body, headers: req.headers })
    res.writeHead(204).end()
  })
})
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const hook = await api.createWebhookEndpoint({
  id: 'results',
  url: 'http://127.0.0.1:' + receiver.address().port + '/in',
  auth: { type: 'hmac' },
  events: ['presentation.result'],
})

await api.createKeyChain({ source: 'generate', id: 'keys', certificate: { mode: 'internal-ca' } })
await api.createCredentialConfig({
  id: 'pid',
  config: { format: 'dc+sd-jwt', vct: '${VCT}' },
  keyChainId: 'keys',
  fields: [
    { path: ['given_name'], type: 'string', disclosable: true },
    { path: ['age_over_18'], type: 'boolean', disclosable: true },
  ],
})
await api.createPresentationConfig({
  id: 'over-18',
  keyChainId: 'keys',
  responseMode: 'direct_post',
  webhookEndpointId: 'results',
  dcqlQuery: {
    credentials: [
      { id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['${VCT}'] }, claims: [{ path: ['age_over_18'] }] },
    ],
  },
})

const { session: issued } = await api.issueAndWait(
  { credentialConfigurationIds: ['pid'], claims: { pid: { given_name: 'Erika', age_over_18: true } } },
  { ...wait, onOffer: (offer) => say({ step: 'offer', ...offer }) },
)
const { session: verified } = await api.verifyAndWait(
  { presentationConfigId: 'over-18' },
  { ...wait, onRequest: (request) => say({ step: 'request', ...request }) },
)

const notFound = await api.getSession('ses_missing').catch((error) => error)

for (let i = 0; i < 100 && deliveries.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100))
receiver.close()
const [delivery] = deliveries
const event = await verifyWebhook(delivery.body, delivery.headers, hook.signingSecret)
const reason = (attempt) => attempt.then(() => 'accepted', (error) => error.reason)
say({
  step: 'done',
  issuance: { status: issued.status, issuedConfigurationIds: issued.issuedConfigurationIds },
  presentation: { status: verified.status, claims: verified.claims },
  notFound: {
    isManagementApiError: notFound instanceof ManagementApiError,
    status: notFound.status,
    code: notFound.code,
  },
  webhook: {
    event: { type: event.type, sessionId: event.sessionId, status: event.status },
    tampered: await reason(verifyWebhook(delivery.body.replace('verified', 'failed'), delivery.headers, hook.signingSecret)),
    replayedLater: await reason(
      verifyWebhook(delivery.body, delivery.headers, hook.signingSecret, { now: () => Date.now() + 3600_000 }),
    ),
    unsigned: await reason(verifyWebhook(delivery.body, {}, hook.signingSecret)),
  },
})
`

const SCRATCH_REQUIRE = `
const sdk = require('@credential-service/sdk')
console.log(JSON.stringify({
  createManagementClient: typeof sdk.createManagementClient,
  ManagementApiError: typeof sdk.ManagementApiError,
}))
`

const SCRATCH_IMPORT = `
import { createManagementClient, ManagementApiError } from '@credential-service/sdk'
console.log(JSON.stringify({
  createManagementClient: typeof createManagementClient,
  ManagementApiError: typeof ManagementApiError,
}))
`

/** What the README's examples take as given: the reader's own functions and values. */
const README_PRELUDE = `
import { createManagementClient as createClientForPrelude } from '@credential-service/sdk'
declare const api: ReturnType<typeof createClientForPrelude>
declare function showQrCode(uri: string): void
declare function respond(status: number): void
declare const rawBody: string
declare const request: { headers: Record<string, string | string[] | undefined> }
declare const signingSecret: string
declare const proof: string
declare const sessionId: string
declare const pngBase64: string
declare const process: { env: Record<string, string | undefined> }
`

/** The SDK as one packing tool shipped it, installed in its own scratch project. */
interface PackedSdk {
  dir: string
  manifest: Record<string, unknown>
  files: string[]
}

/** Files under `dir`, relative, sorted. */
function listFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort()
}

/** What an integrator's TypeScript sees: typed methods, named types, and errors for wrong input. */
const SCRATCH_TYPES_ESM = `
import {
  createManagementClient,
  type CredentialConfig,
  type KeyChain,
  type Session,
  type Tenant,
  type WebhookEvent,
} from '@credential-service/sdk'
const api = createManagementClient({ baseUrl: 'https://credentials.example.com', clientId: 'a', clientSecret: 'b' })
export const tenant: Promise<Tenant> = api.getTenant('acme')
export const chain: Promise<KeyChain> = api.createKeyChain({ source: 'generate' })
export const session: Promise<Session> = api.waitForSession('ses_1', { until: ['completed', 'verified'] })
// @ts-expect-error a tenant id is a string
api.getTenant(1)
// @ts-expect-error spec §9.2: a credential configuration has no \`claims\`
api.createCredentialConfig({ claims: {} })
// Issue 38: a configuration's \`config\` is a union on \`format\`; its type member is read after narrowing.
export const typeOf = (config: CredentialConfig['config']): string =>
  config.format === 'mso_mdoc'
    ? config.docType
    : config.format === 'jwt_vc_json'
      ? config.type.join(' ')
      : config.vct
// @ts-expect-error an mso_mdoc configuration names a docType, never a vct
export const mixed: CredentialConfig['config'] = { format: 'mso_mdoc', vct: 'urn:example:pid:1' }
// Issue 21: a webhook handler narrows the typed body by \`type\` and \`status\`.
export const onWebhook = (event: WebhookEvent): string =>
  event.type === 'issuance.notification'
    ? event.event
    : event.type === 'credential.issued'
      ? event.credentialConfigurationId
      : event.type !== 'presentation.result'
      ? event.type
      : event.status === 'failed'
      ? event.failureReason
      // @ts-expect-error a verified result has no failureReason
      : event.failureReason
`

const SCRATCH_TYPES_CJS = `
import sdk = require('@credential-service/sdk')
const api = sdk.createManagementClient({ baseUrl: 'https://credentials.example.com', accessToken: () => 'token' })
const tenant: Promise<sdk.Tenant> = api.getTenant('acme')
export = tenant
`

const SCRATCH_TSCONFIG = {
  compilerOptions: {
    strict: true,
    noEmit: true,
    module: 'nodenext',
    moduleResolution: 'nodenext',
    lib: ['es2022', 'dom'],
    types: [],
    // Declarations that failed to resolve would be `any`: the @ts-expect-error lines then fail the check.
    skipLibCheck: true,
  },
  files: ['consumer.ts', 'consumer.cts'],
}
