import { randomBytes } from 'node:crypto'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientToken, type ServiceProcess, startDeployment } from './processes'
import { presentByHand } from './text-holder'
import { issueOverHttp } from './wallet'

const databaseUrl = process.env.TEST_DATABASE_URL
const VCT = 'urn:example:employee'

/**
 * Issue 37 item 5 (checklist F-35): a credential revoked or suspended through the management API
 * is refused by the same deployment's verifiers at their next presentation, although each has the
 * list cached for STATUS_LIST_CACHE_MAX_SECONDS (300 s here, the default): the change reaches every
 * process over the tenant-changes channel. One issuer, one management and two verifier processes
 * on PostgreSQL; PUBLIC_URL is the issuer's origin, so the lists are the deployment's own.
 */
describe.runIf(databaseUrl)('revocation takes effect at once in every process (F-35, PostgreSQL)', () => {
  const root = { id: `root-${crypto.randomUUID()}`, secret: 'revocation-processes-root-secret-0123' }
  const tenant = `rv-${randomBytes(4).toString('hex')}`
  const processes: ServiceProcess[] = []
  let management: ServiceProcess
  let verifiers: ServiceProcess[]
  let auth: Record<string, string>

  const managementApi = async (path: string, body?: unknown) => {
    const response = await fetch(`${management.origin}/api${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    // biome-ignore lint/suspicious/noExplicitAny: test reads loosely typed JSON answers
    return { status: response.status, body: (await response.json()) as any }
  }

  beforeAll(async () => {
    const [issuer] = (await startDeployment(databaseUrl as string, root, ['issuer'])) as [ServiceProcess]
    processes.push(issuer)
    processes.push(
      ...(await startDeployment(databaseUrl as string, root, ['management', 'verifier', 'verifier'], {
        PUBLIC_URL: issuer.origin,
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
        RATE_LIMIT_WALLET_PER_MINUTE: '100000',
        STATUS_LIST_CACHE_MAX_SECONDS: '300',
      })),
    )
    management = processes[1] as ServiceProcess
    verifiers = processes.slice(2)
    const operator = {
      authorization: `Bearer ${await clientToken(management.origin, root.id, root.secret)}`,
    }
    auth = operator
    expect((await managementApi('/tenants', { id: tenant, name: tenant })).status).toBe(201)
    const admin = { clientId: `${tenant}-admin`, clientSecret: 'revocation-processes-admin-secret-01' }
    const client = await managementApi(`/tenants/${tenant}/clients`, {
      ...admin,
      roles: [
        'key:manage',
        'issuance:config',
        'issuance:offer',
        'presentation:config',
        'presentation:request',
      ],
    })
    expect(client.status).toBe(201)
    auth = {
      authorization: `Bearer ${await clientToken(management.origin, admin.clientId, admin.clientSecret)}`,
    }
    for (const [path, body] of [
      ['/key-chains', { source: 'generate', id: 'keys' }],
      [
        '/credentials',
        {
          id: 'employee',
          config: { format: 'dc+sd-jwt', vct: VCT },
          keyChainId: 'keys',
          statusManagement: true,
          fields: [{ path: ['name'], type: 'string', disclosable: true }],
        },
      ],
      [
        '/presentations',
        {
          id: 'employee',
          keyChainId: 'keys',
          responseMode: 'direct_post',
          dcqlQuery: {
            credentials: [
              {
                id: 'employee',
                format: 'dc+sd-jwt',
                meta: { vct_values: [VCT] },
                claims: [{ path: ['name'] }],
              },
            ],
          },
        },
      ],
    ] as const) {
      const saved = await managementApi(path, body)
      expect(saved.status, JSON.stringify(saved.body)).toBe(201)
    }
  }, 120_000)

  afterAll(() => Promise.all(processes.map((p) => p.stop())))

  const issue = (handle: string) =>
    issueOverHttp({
      apiBase: management.origin,
      auth,
      configurationId: 'employee',
      claims: { name: 'Erika' },
      offer: { statusHandle: handle },
    })

  /** The credential presented (direct_post) to `verifier` for a new request: the session's end. */
  async function present(issued: Awaited<ReturnType<typeof issue>>, verifier: ServiceProcess) {
    const created = await managementApi('/presentation-requests', { presentationConfigId: 'employee' })
    // PUBLIC_URL is the issuer's: the verifier paths are asked of the verifier process itself.
    const at = (uri: string) => `${verifier.origin}${new URL(uri).pathname}`
    const claims = decodeJwt(await (await fetch(at(created.body.requestUri))).text()) as Record<
      string,
      string
    >
    const vp = await presentByHand({
      credential: issued.credential,
      holderKey: issued.holder.privateKey,
      keep: ['name'],
      nonce: String(claims.nonce),
      aud: String(claims.client_id),
    })
    await fetch(at(String(claims.response_uri)), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        vp_token: JSON.stringify({ employee: [vp] }),
        state: String(claims.state),
      }),
    })
    const session = (await managementApi(`/sessions/${created.body.sessionId}`)).body
    return { status: session.status, failureReason: session.failureReason }
  }
  const presentToEach = (issued: Awaited<ReturnType<typeof issue>>) =>
    Promise.all(verifiers.map((verifier) => present(issued, verifier)))
  const setStatus = async (handle: string, status: string) => {
    const changed = await managementApi('/credential-status', { handle, status })
    expect(changed.status, JSON.stringify(changed.body)).toBe(200)
  }
  const verified = { status: 'verified' }
  const refused = (word: string) => ({ status: 'failed', failureReason: expect.stringContaining(word) })

  it('F-35, TSL §7.1: revoked through the management API, refused at once by both verifier processes (their cached list dropped); the other credential of the list stays valid', async () => {
    const revoked = await issue('f35-revoked')
    const kept = await issue('f35-kept')
    // Both processes now hold the list (one list: one key chain, capacity 2^16).
    expect(await presentToEach(revoked)).toMatchObject([verified, verified])
    await setStatus('f35-revoked', 'revoked')
    expect(await presentToEach(revoked)).toMatchObject([refused('revoked'), refused('revoked')])
    expect(await presentToEach(kept)).toMatchObject([verified, verified])
  }, 60_000)

  it('F-35, TSL §7.1: suspended, refused at once; reinstated, accepted at once', async () => {
    const issued = await issue('f35-suspended')
    expect(await presentToEach(issued)).toMatchObject([verified, verified])
    await setStatus('f35-suspended', 'suspended')
    expect(await presentToEach(issued)).toMatchObject([refused('suspended'), refused('suspended')])
    await setStatus('f35-suspended', 'valid')
    expect(await presentToEach(issued)).toMatchObject([verified, verified])
  }, 60_000)
})
