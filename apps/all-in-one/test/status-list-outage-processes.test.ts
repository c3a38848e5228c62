import { createHash, randomBytes } from 'node:crypto'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setGlobalConfig } from '@openid4vc/oauth2'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { answerOverDcApi, type DcApiEntry } from './oid4vp-wallet'
import { type ServiceProcess, startDeployment, tenantAdmin } from './processes'
import { issueOverHttp, presentSdJwt } from './wallet'

setGlobalConfig({ allowInsecureUrls: true })
const databaseUrl = process.env.TEST_DATABASE_URL
const ORIGIN = 'https://rp.example'
const VCT = 'urn:example:employee'

type ListServer = 'up' | 'down' | 'slow'

/**
 * The deployment's ingress (PUBLIC_URL): `/verifiers/**` to the first verifier, the rest to the
 * issuer, whose status lists it can drop (`down`) or hold back for 7 s (`slow`, past the
 * verifier's 5 s fetch timeout), as an overloaded list server does.
 */
async function startIngress() {
  const targets = { issuer: '', verifier: '' }
  const state: { lists: ListServer } = { lists: 'up' }
  const server = createServer((req, res) => {
    const path = String(req.url)
    let closed = false
    res.on('close', () => {
      closed = true
    })
    const forward = () => {
      if (closed) return
      const target = new URL(path, path.startsWith('/verifiers/') ? targets.verifier : targets.issuer)
      const upstream = request(target, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      })
      upstream.on('error', () => res.destroy())
      req.pipe(upstream)
    }
    if (!path.includes('/status-lists/') || state.lists === 'up') return forward()
    if (state.lists === 'down') return res.destroy()
    setTimeout(forward, 7000)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, targets, state, server }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Issue 36 item 3 (checklist S-135): a status list that cannot be fetched in time is no verdict.
 * Two verifier processes on one PostgreSQL database: the wallet's response is answered 503
 * `temporarily_unavailable` with `Retry-After`, its session stays pending, and the same response
 * posted again (to either process) verifies once the list answers; a replay after that is refused.
 */
describe.runIf(databaseUrl)('a status list that cannot be fetched in time (S-135, PostgreSQL)', () => {
  const root = { id: `root-${crypto.randomUUID()}`, secret: 'status-outage-root-secret-0123456789' }
  const tenant = `so-${randomBytes(4).toString('hex')}`
  const processes: ServiceProcess[] = []
  let ingress: Awaited<ReturnType<typeof startIngress>>
  let management: ServiceProcess
  let verifiers: [ServiceProcess, ServiceProcess]
  let auth: Record<string, string>

  beforeAll(async () => {
    ingress = await startIngress()
    const env = {
      PUBLIC_URL: ingress.origin,
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      RATE_LIMIT_WALLET_PER_MINUTE: '100000',
      // Short enough for the stale window to pass within the test.
      STATUS_LIST_CACHE_MAX_SECONDS: '2',
      STATUS_LIST_CACHE_STALE_IF_ERROR_SECONDS: '3',
    }
    processes.push(
      ...(await startDeployment(
        databaseUrl as string,
        root,
        ['issuer', 'management', 'verifier', 'verifier'],
        env,
      )),
    )
    const [issuer, managementProcess, a, b] = processes as [
      ServiceProcess,
      ServiceProcess,
      ServiceProcess,
      ServiceProcess,
    ]
    management = managementProcess
    verifiers = [a, b]
    ingress.targets.issuer = issuer.origin
    ingress.targets.verifier = a.origin
    const admin = await tenantAdmin(management.origin, root, tenant, [
      'key:manage',
      'issuance:config',
      'issuance:offer',
      'presentation:config',
      'presentation:request',
    ])
    auth = admin.auth
    const api = admin.post
    await api('/key-chains', { source: 'generate', id: 'keys' })
    await api('/credentials', {
      id: 'employee',
      config: { format: 'dc+sd-jwt', vct: VCT },
      keyChainId: 'keys',
      statusManagement: true,
      fields: [{ path: ['name'], type: 'string', disclosable: true }],
    })
    const dcqlQuery = {
      credentials: [
        { id: 'employee', format: 'dc+sd-jwt', meta: { vct_values: [VCT] }, claims: [{ path: ['name'] }] },
      ],
    }
    await api('/presentations', {
      id: 'employee',
      dcqlQuery,
      keyChainId: 'keys',
      responseMode: 'direct_post',
    })
    // Presentation during issuance (Interactive Authorization) checks the same status lists.
    await api('/login-providers', {
      id: 'employee-login',
      kind: 'presentation',
      presentationConfigId: 'employee',
    })
    await api('/credentials', {
      id: 'badge',
      config: { format: 'dc+sd-jwt', vct: 'urn:example:badge' },
      keyChainId: 'keys',
      fields: [{ path: ['name'], type: 'string', mandatory: true }],
      userAuthentication: { loginProviderId: 'employee-login', claims: { name: ['name'] } },
    })
    await api('/presentations', {
      id: 'dc-employee',
      dcqlQuery,
      keyChainId: 'keys',
      dcApi: { origins: [ORIGIN] },
    })
  }, 120_000)

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()))
    await new Promise((resolve) => ingress?.server.close(resolve))
  })

  const readSession = async (id: string) =>
    (await (await fetch(`${management.origin}/api/sessions/${id}`, { headers: auth })).json()) as Record<
      string,
      unknown
    >

  /** A credential with a status list entry, and a wallet's direct_post response to a new request. */
  async function directPostAnswer() {
    const { credential, holder } = await issueOverHttp({
      apiBase: management.origin,
      auth,
      configurationId: 'employee',
      claims: { name: 'Erika' },
    })
    const created = await fetch(`${management.origin}/api/presentation-requests`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ presentationConfigId: 'employee' }),
    }).then((response) => response.json() as Promise<{ sessionId: string; requestUri: string }>)
    const claims = decodeJwt(await (await fetch(created.requestUri)).text()) as Record<string, string>
    const vp = await presentSdJwt({
      credential,
      holder,
      disclose: { name: true },
      nonce: claims.nonce as string,
      aud: claims.client_id as string,
    })
    const form = new URLSearchParams({
      vp_token: JSON.stringify({ employee: [vp] }),
      state: claims.state ?? '',
    })
    const path = new URL(claims.response_uri as string).pathname
    /** Posts the same response to a verifier process: its status, Retry-After and body. */
    const post = async (verifier: ServiceProcess) => {
      const response = await fetch(`${verifier.origin}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      })
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: await response.json(),
      }
    }
    return { sessionId: created.sessionId, post }
  }

  const RETRY = {
    status: 503,
    retryAfter: '5',
    body: {
      error: 'temporarily_unavailable',
      error_description: 'the credential status cannot be checked now; send the same response again',
    },
  }
  const verified = { status: 'verified', claims: { employee: [expect.objectContaining({ name: 'Erika' })] } }

  it('S-135, OpenID4VP §8.2 direct_post: list slow then down: 503 temporarily_unavailable with Retry-After, session pending; the same response verifies at the other process once the list is up; a replay is refused', async () => {
    const [a, b] = verifiers
    const answer = await directPostAnswer()
    ingress.state.lists = 'slow'
    expect(await answer.post(a)).toStrictEqual(RETRY)
    expect(await readSession(answer.sessionId)).toMatchObject({ status: 'pending', failureReason: null })
    ingress.state.lists = 'down'
    expect(await answer.post(b)).toStrictEqual(RETRY)
    expect(await readSession(answer.sessionId)).toMatchObject({ status: 'pending' })
    ingress.state.lists = 'up'
    expect(await answer.post(b)).toMatchObject({ status: 200, body: {} })
    expect(await readSession(answer.sessionId)).toMatchObject(verified)
    // One response per request (OpenID4VP §8.2): after the success the same response is a replay.
    expect(await answer.post(a)).toMatchObject({ status: 400, body: { error: 'invalid_request' } })
    expect(await readSession(answer.sessionId)).toMatchObject(verified)
  }, 60_000)

  it('S-135, OpenID4VP Appendix A (DC API): with the list down the answer is retryable and its session pending; posted again once the list is up, it verifies', async () => {
    const [a] = verifiers
    const { credential, holder } = await issueOverHttp({
      apiBase: management.origin,
      auth,
      configurationId: 'employee',
      claims: { name: 'Erika' },
    })
    const created = await fetch(`${management.origin}/api/presentation-requests`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ presentationConfigId: 'dc-employee', transport: 'dc-api', origin: ORIGIN }),
    }).then(
      (response) =>
        response.json() as Promise<{
          sessionId: string
          dcApi: { requests: DcApiEntry[]; responseUri: string }
        }>,
    )
    const unsigned = created.dcApi.requests.find((entry) => entry.protocol === 'openid4vp-v1-unsigned')
    const answer = await answerOverDcApi(unsigned as DcApiEntry, ORIGIN, async (request, aud) => ({
      employee: [
        await presentSdJwt({
          credential,
          holder,
          disclose: { name: true },
          nonce: request.nonce as string,
          aud,
        }),
      ],
    }))
    const post = async () => {
      const response = await fetch(`${a.origin}${new URL(created.dcApi.responseUri).pathname}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(answer),
      })
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: await response.json(),
      }
    }
    // This process has no good copy of the list (the first test's fetch here timed out).
    ingress.state.lists = 'down'
    expect(await post()).toStrictEqual(RETRY)
    expect(await readSession(created.sessionId)).toMatchObject({ status: 'pending' })
    ingress.state.lists = 'up'
    expect(await post()).toMatchObject({ status: 200, body: {} })
    expect(await readSession(created.sessionId)).toMatchObject(verified)
  }, 60_000)

  it('S-135 stale-if-error: with the list down, a process’s last good list answers for STATUS_LIST_CACHE_STALE_IF_ERROR_SECONDS past its lifetime, then responses wait (503) until the list is back', async () => {
    const [a] = verifiers
    const [first, second, third] = [
      await directPostAnswer(),
      await directPostAnswer(),
      await directPostAnswer(),
    ]
    ingress.state.lists = 'up'
    expect(await first.post(a)).toMatchObject({ status: 200 })
    const fetched = Date.now()
    ingress.state.lists = 'down'
    // Past its 2 s lifetime, within the 3 s stale window.
    await sleep(2300)
    expect(await second.post(a)).toMatchObject({ status: 200 })
    expect(await readSession(second.sessionId)).toMatchObject(verified)
    // Past the window: no list to stand in.
    await sleep(Math.max(0, fetched + 5500 - Date.now()))
    expect(await third.post(a)).toStrictEqual(RETRY)
    expect(await readSession(third.sessionId)).toMatchObject({ status: 'pending' })
    ingress.state.lists = 'up'
    expect(await third.post(a)).toMatchObject({ status: 200 })
    expect(await readSession(third.sessionId)).toMatchObject(verified)
  }, 60_000)

  it('S-135, OpenID4VCI 1.1 Interactive Authorization: with the list down the follow-up is 503 and keeps its auth_session; sent again once the list is up, it gets the code; then the auth_session is used', async () => {
    const issuer = processes[0] as ServiceProcess
    const { credential, holder } = await issueOverHttp({
      apiBase: management.origin,
      auth,
      configurationId: 'employee',
      claims: { name: 'Erika' },
    })
    const endpoint = `${issuer.origin}/issuers/${tenant}/authorize-challenge`
    const post = async (body: Record<string, string>) => {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body),
      })
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        // biome-ignore lint/suspicious/noExplicitAny: protocol answers are read loosely in tests
        body: (await response.json()) as any,
      }
    }
    const initial = await post({
      response_type: 'code',
      client_id: 'wallet-1',
      code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
      code_challenge_method: 'S256',
      scope: 'badge',
      interaction_types_supported: 'urn:openid:dcp:ia:openid4vp_presentation',
    })
    expect(initial.status, JSON.stringify(initial.body)).toBe(401)
    const { openid4vp_request: openid4vp } = initial.body
    const request = typeof openid4vp.request === 'string' ? decodeJwt(openid4vp.request) : openid4vp
    const vp = await presentSdJwt({
      credential,
      holder,
      disclose: { name: true },
      nonce: request.nonce as string,
      aud: `ia:${ingress.origin}`,
    })
    const followUp = {
      auth_session: initial.body.auth_session,
      openid4vp_response: JSON.stringify({ vp_token: { employee: [vp] } }),
    }
    ingress.state.lists = 'down'
    expect(await post(followUp)).toStrictEqual(RETRY)
    ingress.state.lists = 'up'
    const answered = await post(followUp)
    expect(answered.status, JSON.stringify(answered.body)).toBe(200)
    expect(answered.body.authorization_code).toEqual(expect.any(String))
    expect(await post(followUp)).toMatchObject({ status: 400, body: { error: 'invalid_session' } })
  }, 60_000)
})
