import { randomBytes } from 'node:crypto'
import { decodeJwt, generateKeyPair } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  FEDERATION_VCT,
  federatedPresentation,
  type IssuerEntity,
  publicJwk,
  startIssuerEntities,
} from './federation-issuer-entities'
import { type LocalFederation, startLocalFederation } from './local-federation'
import { type ServiceProcess, startDeployment, tenantAdmin } from './processes'

const databaseUrl = process.env.TEST_DATABASE_URL
const PUBLIC_URL = 'https://credentials.test'

/**
 * Issuer trust chains are cached per verifier process until their earliest exp (OpenID
 * Federation 1.0 §10.4), and a change of the trust source reaches every process (the tenant
 * change announcement): two verifier processes on PostgreSQL.
 */
describe.runIf(databaseUrl)('federation trust sources across two verifier processes (PostgreSQL)', () => {
  const root = { id: `root-${crypto.randomUUID()}`, secret: 'federation-trust-root-secret-0123456' }
  const tenant = `ft-${randomBytes(4).toString('hex')}`
  const processes: ServiceProcess[] = []
  let federation: LocalFederation
  let issuers: Awaited<ReturnType<typeof startIssuerEntities>>
  let admin: Awaited<ReturnType<typeof tenantAdmin>>
  const management = () => processes[0] as ServiceProcess
  const send = async (method: string, path: string, body: unknown) => {
    const response = await fetch(`${management().origin}/api${path}`, {
      method,
      headers: { ...admin.auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    // biome-ignore lint/suspicious/noExplicitAny: test reads loosely typed JSON answers
    return { status: response.status, body: (await response.json()) as any }
  }
  const source = (extra: Record<string, unknown> = {}) => ({
    id: 'fed',
    source: {
      type: 'openid-federation',
      trustAnchor: federation.anchorId,
      jwks: federation.anchorJwks,
      ...extra,
    },
  })

  /** `entity`'s credential presented (direct_post) to `verifier` for a new request: the session's end. */
  async function present(entity: IssuerEntity, verifier: ServiceProcess) {
    const created = await send('POST', '/presentation-requests', { presentationConfigId: 'fed' })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    // PUBLIC_URL is no process: the verifier paths are asked of the verifier process itself.
    const at = (uri: string) => `${verifier.origin}${new URL(uri).pathname}`
    const claims = decodeJwt(await (await fetch(at(created.body.requestUri))).text()) as Record<
      string,
      string
    >
    const vp = await federatedPresentation(entity, {
      nonce: String(claims.nonce),
      client_id: String(claims.client_id),
    })
    await fetch(at(String(claims.response_uri)), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ vp_token: JSON.stringify({ age: [vp] }), state: String(claims.state) }),
    })
    const session = await fetch(`${management().origin}/api/sessions/${created.body.sessionId}`, {
      headers: admin.auth,
    })
    const body = (await session.json()) as { status: string; failureReason: string | null }
    return { status: body.status, failureReason: body.failureReason }
  }
  const presentToEach = (entity: IssuerEntity) =>
    Promise.all(processes.slice(1).map((verifier) => present(entity, verifier)))

  beforeAll(async () => {
    federation = await startLocalFederation()
    issuers = await startIssuerEntities(federation)
    processes.push(
      ...(await startDeployment(databaseUrl as string, root, ['management', 'verifier', 'verifier'], {
        PUBLIC_URL,
        DATABASE_POOL_SIZE: '2',
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
        RATE_LIMIT_WALLET_PER_MINUTE: '100000',
      })),
    )
    admin = await tenantAdmin(management().origin, root, tenant, [
      'key:manage',
      'presentation:config',
      'presentation:request',
    ])
    await admin.post('/key-chains', { source: 'generate', id: 'keys' })
    expect((await send('POST', '/trust-lists', source())).status).toBe(201)
    const config = await send('POST', '/presentations', {
      id: 'fed',
      keyChainId: 'keys',
      responseMode: 'direct_post',
      trustListIds: ['fed'],
      dcqlQuery: {
        credentials: [
          {
            id: 'age',
            format: 'dc+sd-jwt',
            meta: { vct_values: [FEDERATION_VCT] },
            claims: [{ path: ['age_over_18'] }],
          },
        ],
      },
    })
    expect(config.status, JSON.stringify(config.body)).toBe(201)
  }, 120_000)

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()))
    await issuers?.close()
    await federation?.close()
  })

  it('§10.4: each process keeps the chain it resolved (a later change of a superior is not fetched again); a change of the trust source drops it in both', async () => {
    const issuer = await issuers.issuer('cached')
    expect(await presentToEach(issuer)).toMatchObject([{ status: 'verified' }, { status: 'verified' }])
    // The intermediate now lists another key for the issuer: a fresh resolution would fail.
    const stranger = await generateKeyPair('ES256')
    federation.enrol(issuer.id, { keys: [await publicJwk(stranger, 'stranger')] })
    // Past the tenant cache's 5 s re-read: the chains outlive the rows it reads again.
    await new Promise((resolve) => setTimeout(resolve, 6000))
    expect(await presentToEach(issuer)).toMatchObject([{ status: 'verified' }, { status: 'verified' }])
    // Replacing the trust list (here: a description) is a tenant change both processes hear.
    const replaced = await send('PUT', '/trust-lists/fed', { ...source(), description: 'changed' })
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200)
    let results: Awaited<ReturnType<typeof presentToEach>> = []
    for (let attempt = 0; attempt < 20; attempt++) {
      results = await presentToEach(issuer)
      if (results.every((result) => result.status === 'failed')) break
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    const refused = {
      status: 'failed',
      failureReason: expect.stringContaining(`trust source 'fed' (broken chain)`),
    }
    expect(results).toMatchObject([refused, refused])
  })
})
