import { X509Certificate } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { msoStatusEntry } from '@credential-service/crypto'
import { createStatusListRepository, STATUS_INVALID } from '@credential-service/db-schema'
import { queryRows, testDatabases } from '@credential-service/db-schema/testing'
import { getListFromStatusListJWT } from '@sd-jwt/jwt-status-list'
import { decode as cborDecode } from 'cbor-x'
import { sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { base64url, compactVerify, decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { type AllInOne, startAllInOneWorld } from './harness'
import { issueOverHttp, mdocDeviceResponse, presentOverHttp } from './wallet'

const DOCTYPE = 'org.iso.18013.5.1.mDL'
const NS = 'org.iso.18013.5.1'

// biome-ignore lint/suspicious/noExplicitAny: loosely typed JSON answers
type Loose = any

describe.each(testDatabases())('Token Status List issuance on $name', (testDatabase) => {
  let app: FastifyInstance
  let database: AllInOne['database']
  let baseUrl: string
  let auth: Record<string, string>
  let otherAuth: Record<string, string>
  let rootAuth: Record<string, string>
  let tenant: string
  let other: string
  const served: { accept: string | undefined; type: string }[] = []

  const call = async (method: string, path: string, body: unknown, headers: Record<string, string>) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    return { status: response.status, body: (text ? JSON.parse(text) : null) as Loose }
  }
  const post = (path: string, body: unknown, headers = auth) => call('POST', path, body, headers)

  async function clientOf(id: string, root: Record<string, string>, roles: string[]) {
    await post('/api/tenants', { id, name: id }, root)
    const client = (await post(`/api/tenants/${id}/clients`, { roles }, root)).body
    const token = await post(
      '/api/oauth2/token',
      { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret },
      {},
    )
    return { authorization: `Bearer ${token.body.access_token as string}` }
  }

  beforeAll(async () => {
    const port = await freePort()
    baseUrl = `http://127.0.0.1:${port}`
    // Our own verifier fetches our own lists: plain http to this test host is allowed.
    // The `status-list` world (test/worlds/status-list): tenant a issues `employee` and `mdl` with
    // status entries and `plain` without, and asks for them; tenant b has an offer client only.
    const started = await startAllInOneWorld(testDatabase, 'status-list', baseUrl, {
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      // A change of status is refused at the next presentation, not after the list's ttl: no
      // cache (packages/server-kit/src/presentation/status-list.test.ts tests it).
      STATUS_LIST_CACHE_MAX_SECONDS: '0',
    })
    app = started.app
    database = started.database
    await app.listen({ host: '127.0.0.1', port })
    // What the list endpoint answered, and to which Accept: which form our verifier read.
    // Fastify hands its headers to writeHead, so that is where the content type shows.
    app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (!req.url?.includes('/status-lists/')) return
      const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse
      res.writeHead = ((...args: unknown[]) => {
        const headers = args.find((arg) => typeof arg === 'object') as Record<string, unknown> | undefined
        served.push({ accept: req.headers.accept, type: String(headers?.['content-type']) })
        return writeHead(...args)
      }) as typeof res.writeHead
    })
    rootAuth = started.root
    tenant = started.tenants.a.id
    other = started.tenants.b.id
    auth = started.tenants.a.auth
    otherAuth = started.tenants.b.auth
  })
  afterAll(() => app.close())

  const issue = (options: { offer?: Record<string, unknown>; batch?: number } = {}) =>
    issueOverHttp({
      apiBase: baseUrl,
      auth,
      configurationId: 'employee',
      claims: { given_name: 'Erika' },
      ...options,
    })
  const statusOf = (credential: string) =>
    (decodeJwt(credential.split('~')[0] as string) as Loose).status?.status_list as
      | { idx: number; uri: string }
      | undefined
  const listToken = async (uri: string) => {
    const response = await fetch(uri)
    expect(response.status).toBe(200)
    return { response, token: await response.text() }
  }
  const entryAt = async (entry: { idx: number; uri: string }) =>
    getListFromStatusListJWT((await listToken(entry.uri)).token).getStatus(entry.idx)

  /** Presents the credential to our own verifier over HTTP; answers the presentation session. */
  async function verify(issued: Awaited<ReturnType<typeof issue>>) {
    const request = (await post('/api/presentation-requests', { presentationConfigId: 'employee-check' }))
      .body
    await presentOverHttp({
      requestUri: request.requestUri,
      credentialQueryId: 'employee',
      credential: issued.credential,
      holder: issued.holder,
      disclose: { given_name: true },
    })
    return (await call('GET', `/api/sessions/${request.sessionId}`, undefined, auth)).body
  }

  /** Presents an mdoc to our own verifier over HTTP (direct_post); answers the presentation session. */
  async function verifyMdoc(issued: Awaited<ReturnType<typeof issueOverHttp>>) {
    const request = (await post('/api/presentation-requests', { presentationConfigId: 'mdl-check' })).body
    const claims = decodeJwt(await (await fetch(request.requestUri)).text()) as Loose
    const vp = await mdocDeviceResponse({
      ...issued,
      docType: DOCTYPE,
      clientId: claims.client_id,
      nonce: claims.nonce,
      responseUri: claims.response_uri,
    })
    await fetch(claims.response_uri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ vp_token: JSON.stringify({ mdl: [vp] }), state: claims.state }),
    })
    return (await call('GET', `/api/sessions/${request.sessionId}`, undefined, auth)).body
  }

  it('SD-JWT VC §3.2.2.2, F-05, F-30–F-32: the credential names its entry; the URI serves a signed statuslist+jwt where it is VALID', async () => {
    const issued = await issue()
    const entry = statusOf(issued.credential)
    expect(entry).toStrictEqual({ idx: expect.any(Number), uri: expect.any(String) })
    expect(entry?.uri).toMatch(new RegExp(`^${baseUrl}/issuers/${tenant}/status-lists/stl_`))
    // F-03: status is a plain claim, never a disclosure.
    expect(
      issued.credential
        .split('~')
        .slice(1, -1)
        .map((d) => base64url.decode(d).toString()),
    ).not.toContain('status')
    const { response, token } = await listToken(entry?.uri as string)
    expect(response.headers.get('content-type')).toBe('application/statuslist+jwt')
    expect(response.headers.get('cache-control')).toBe('public, max-age=300')
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    const header = decodeProtectedHeader(token)
    const credentialHeader = decodeProtectedHeader(issued.credential.split('~')[0] as string)
    expect(header).toMatchObject({ typ: 'statuslist+jwt', alg: 'ES256', x5c: credentialHeader.x5c })
    const leaf = new X509Certificate(Buffer.from((header.x5c as string[])[0] as string, 'base64'))
    const { payload } = await compactVerify(token, leaf.publicKey)
    const claims = JSON.parse(new TextDecoder().decode(payload))
    expect(claims).toStrictEqual({
      sub: entry?.uri,
      iat: expect.any(Number),
      exp: claims.iat + 86_400,
      ttl: 300,
      status_list: { bits: 2, lst: expect.any(String) },
    })
    const list = getListFromStatusListJWT(token)
    expect(list.statusList).toHaveLength(2 ** 17)
    expect(list.getStatus(entry?.idx as number)).toBe(0)
    // A configuration without statusManagement gets no status claim.
    const plain = await issueOverHttp({
      apiBase: baseUrl,
      auth,
      configurationId: 'plain',
      claims: { given_name: 'Erika' },
    })
    expect(statusOf(plain.credential)).toBeUndefined()
  })

  it('TSL §8.3, V-33: revoked by session, the bit is INVALID and our verifier refuses the credential; revocation is final (409); audited', async () => {
    const issued = await issue()
    const entry = statusOf(issued.credential) as { idx: number; uri: string }
    expect(await verify(issued)).toMatchObject({ status: 'verified', failureReason: null })

    const revoked = await post(`/api/sessions/${issued.sessionId}/status`, { status: 'revoked' })
    expect(revoked).toStrictEqual({ status: 200, body: { status: 'revoked', credentials: 1, changed: 1 } })
    expect(await entryAt(entry)).toBe(1)
    expect(await verify(issued)).toMatchObject({
      status: 'failed',
      failureReason: 'the credential is revoked (INVALID)',
    })
    // Again: nothing changes, still 200.
    expect(
      (await post(`/api/sessions/${issued.sessionId}/status`, { status: 'revoked' })).body,
    ).toStrictEqual({ status: 'revoked', credentials: 1, changed: 0 })
    for (const status of ['valid', 'suspended']) {
      const refused = await post(`/api/sessions/${issued.sessionId}/status`, { status })
      expect(refused.status).toBe(409)
      expect(refused.body).toMatchObject({ status: 409, code: 'conflict' })
    }
    expect(await entryAt(entry)).toBe(1)
    const audit = await call('GET', '/api/audit-events?resourceType=credential-status', undefined, auth)
    expect(audit.body.items).toContainEqual(
      expect.objectContaining({
        action: 'update',
        resourceType: 'credential-status',
        resourceId: issued.sessionId,
        fields: ['status'],
      }),
    )
  })

  it('TSL §7.1: suspended by handle, then reinstated: SUSPENDED (2) refuses, VALID verifies again', async () => {
    const handle = `contract-${crypto.randomUUID().slice(0, 8)}`
    const first = await issue({ offer: { statusHandle: handle } })
    const second = await issue({ offer: { statusHandle: handle } })
    const entries = [statusOf(first.credential), statusOf(second.credential)] as {
      idx: number
      uri: string
    }[]

    const suspended = await post('/api/credential-status', { handle, status: 'suspended' })
    expect(suspended).toStrictEqual({
      status: 200,
      body: { status: 'suspended', credentials: 2, changed: 2 },
    })
    for (const entry of entries) expect(await entryAt(entry)).toBe(2)
    expect(await verify(first)).toMatchObject({
      status: 'failed',
      failureReason: 'the credential is suspended',
    })

    const reinstated = await post('/api/credential-status', { handle, status: 'valid' })
    expect(reinstated.body).toStrictEqual({ status: 'valid', credentials: 2, changed: 2 })
    for (const entry of entries) expect(await entryAt(entry)).toBe(0)
    expect(await verify(second)).toMatchObject({ status: 'verified' })

    expect(
      (await post('/api/credential-status', { handle: 'no-such-handle', status: 'revoked' })).status,
    ).toBe(404)
    const invalid = await post('/api/credential-status', { handle, status: 'deleted' })
    expect(invalid.status).toBe(400)
    // A session that issued nothing with a status entry is a conflict, an unknown one 404.
    const plain = await issueOverHttp({
      apiBase: baseUrl,
      auth,
      configurationId: 'plain',
      claims: { given_name: 'Erika' },
    })
    expect((await post(`/api/sessions/${plain.sessionId}/status`, { status: 'revoked' })).status).toBe(409)
    expect((await post('/api/sessions/ses_unknown/status', { status: 'revoked' })).status).toBe(404)
  })

  it('I-68, F-34, HAIP 6.1: the copies of a batch get distinct, non-sequential random indexes', async () => {
    const indexes: number[] = []
    for (let i = 0; i < 4; i++) {
      const batch = await issue({ batch: 3 })
      expect(batch.credentials).toHaveLength(3)
      const entries = batch.credentials.map(
        (credential) => statusOf(credential) as { idx: number; uri: string },
      )
      expect(new Set(entries.map((e) => e.uri)).size).toBe(1)
      const [a, b, c] = entries.map((e) => e.idx).sort((x, y) => x - y) as [number, number, number]
      // Not consecutive, not even an arithmetic sequence.
      expect(b - a).not.toBe(c - b)
      indexes.push(a, b, c)
    }
    expect(new Set(indexes).size).toBe(indexes.length)
  })

  it('TSL §8.2: ETag and If-None-Match answer 304 until a status changes', async () => {
    const issued = await issue()
    const entry = statusOf(issued.credential) as { idx: number; uri: string }
    const { response } = await listToken(entry.uri)
    const etag = response.headers.get('etag') as string
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
    expect(response.headers.get('last-modified')).toBeTruthy()
    const unchanged = await fetch(entry.uri, { headers: { 'if-none-match': etag } })
    expect(unchanged.status).toBe(304)
    expect(await unchanged.text()).toBe('')
    await post(`/api/sessions/${issued.sessionId}/status`, { status: 'suspended' })
    const changed = await fetch(entry.uri, { headers: { 'if-none-match': etag } })
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).not.toBe(etag)
    expect(getListFromStatusListJWT(await changed.text()).getStatus(entry.idx)).toBe(2)
  })

  it('S-100: another tenant cannot change, nor read through its own issuer path, this tenant’s statuses (404)', async () => {
    const handle = `case-${crypto.randomUUID().slice(0, 8)}`
    const issued = await issue({ offer: { statusHandle: handle } })
    const entry = statusOf(issued.credential) as { idx: number; uri: string }
    const bySession = await post(`/api/sessions/${issued.sessionId}/status`, { status: 'revoked' }, otherAuth)
    expect(bySession.status).toBe(404)
    const byHandle = await post('/api/credential-status', { handle, status: 'revoked' }, otherAuth)
    expect(byHandle.status).toBe(404)
    const viaPath = await post(
      `/api/tenants/${tenant}/credential-status`,
      { handle, status: 'revoked' },
      otherAuth,
    )
    expect(viaPath.status).toBe(404)
    expect(await entryAt(entry)).toBe(0)
    const listId = entry.uri.split('/').at(-1) as string
    expect((await fetch(`${baseUrl}/issuers/${other}/status-lists/${listId}`)).status).toBe(404)
    expect((await fetch(`${baseUrl}/issuers/${tenant}/status-lists/stl_unknown`)).status).toBe(404)
  })

  it('GET /api/status-lists: the tenant’s lists with the URI credentials name, filtered by key chain and paged; another tenant sees none (S-100)', async () => {
    const issued = await issue()
    const entry = statusOf(issued.credential) as { idx: number; uri: string }
    const listId = entry.uri.split('/').at(-1) as string
    const all = await call('GET', '/api/status-lists', undefined, auth)
    expect(all.status, JSON.stringify(all.body)).toBe(200)
    const list = all.body.items.find((item: Loose) => item.id === listId)
    expect(list).toMatchObject({ keyChainId: 'keys', uri: entry.uri, bits: 2, allocated: expect.any(Number) })
    expect(list.allocated).toBeGreaterThanOrEqual(1)
    expect(list.allocated).toBeLessThanOrEqual(list.capacity)
    expect(list.capacity).toBeLessThanOrEqual(list.size)
    // The list was fetched by earlier tests of this suite, or now: then it has a signing time.
    await listToken(entry.uri)
    const one = await call('GET', `/api/tenants/${tenant}/status-lists/${listId}`, undefined, auth)
    expect(one.status).toBe(200)
    expect(one.body).toMatchObject({ id: listId, uri: entry.uri, signedAt: expect.any(String) })
    const none = await call('GET', '/api/status-lists?keyChainId=another', undefined, auth)
    expect(none.body).toStrictEqual({ items: [], nextCursor: null })
    const paged = await call('GET', '/api/status-lists?limit=1', undefined, auth)
    expect(paged.body.items).toHaveLength(1)

    expect((await call('GET', '/api/status-lists', undefined, otherAuth)).body.items).toStrictEqual([])
    expect((await call('GET', `/api/status-lists/${listId}`, undefined, otherAuth)).status).toBe(404)
    expect((await call('GET', `/api/tenants/${tenant}/status-lists`, undefined, otherAuth)).status).toBe(404)
  })

  it('ISO 18013-5 MSO, TSL §6.3, §8.3, F-23, V-33: an mdoc carries status.status_list {idx, uri} in its signed MSO; our verifier refuses it once suspended or revoked', async () => {
    const issued = await issueOverHttp({
      apiBase: baseUrl,
      auth,
      configurationId: 'mdl',
      claims: { [NS]: { family_name: 'Mustermann' } },
    })
    const issuerSigned = cborDecode(base64url.decode(issued.credential)) as Loose
    // Read by the verifier's own reader: tag 24 decodes differently once @owf/mdoc is loaded.
    const entry = (await msoStatusEntry(issuerSigned.issuerAuth[2] as Uint8Array)) as {
      idx: number
      uri: string
    }
    expect(entry).toStrictEqual({ idx: expect.any(Number), uri: expect.any(String) })
    expect(entry.uri).toMatch(new RegExp(`^${baseUrl}/issuers/${tenant}/status-lists/stl_`))
    expect(await entryAt(entry)).toBe(0)
    expect(await verifyMdoc(issued)).toMatchObject({ status: 'verified', failureReason: null })
    await post(`/api/sessions/${issued.sessionId}/status`, { status: 'suspended' })
    expect(await entryAt(entry)).toBe(2)
    expect(await verifyMdoc(issued)).toMatchObject({
      status: 'failed',
      failureReason: 'the credential is suspended',
    })
    await post(`/api/sessions/${issued.sessionId}/status`, { status: 'revoked' })
    expect(await entryAt(entry)).toBe(1)
    expect(await verifyMdoc(issued)).toMatchObject({
      status: 'failed',
      failureReason: 'the credential is revoked (INVALID)',
    })
  })

  it('TSL §5.2, §8.1, V-33: our verifier reads an mdoc’s list in its CWT form; revoked by session, the mdoc is refused through it', async () => {
    const issued = await issueOverHttp({
      apiBase: baseUrl,
      auth,
      configurationId: 'mdl',
      claims: { [NS]: { family_name: 'Gabler' } },
    })
    const readByVerifier = () =>
      served.splice(0).filter(({ accept }) => accept?.startsWith('application/statuslist+cwt'))
    served.splice(0)
    expect(await verifyMdoc(issued)).toMatchObject({ status: 'verified', failureReason: null })
    expect(readByVerifier()).toStrictEqual([
      { accept: expect.any(String), type: 'application/statuslist+cwt' },
    ])
    await post(`/api/sessions/${issued.sessionId}/status`, { status: 'revoked' })
    expect(await verifyMdoc(issued)).toMatchObject({
      status: 'failed',
      failureReason: 'the credential is revoked (INVALID)',
    })
    expect(readByVerifier()).toStrictEqual([
      { accept: expect.any(String), type: 'application/statuslist+cwt' },
    ])
  })

  it('F-34: 50 parallel allocations never hand out one index twice; a full list makes way for the next', async () => {
    const lists = createStatusListRepository(database.db, tenant)
    const keyChainId = `chain-${crypto.randomUUID().slice(0, 8)}`
    expect((await post('/api/key-chains', { source: 'generate', id: keyChainId })).status).toBe(201)
    const shape = { size: 64, bits: 2 as const, capacity: 32 }
    const allocated = (
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          lists.allocate({
            keyChainId,
            count: 1,
            sessionId: `ses_parallel${i}`,
            credentialConfigurationId: 'employee',
            handle: null,
            shape,
          }),
        ),
      )
    ).flat()
    expect(allocated).toHaveLength(50)
    expect(new Set(allocated.map((a) => `${a.listId}/${a.idx}`)).size).toBe(50)
    for (const a of allocated) expect(a.idx).toBeGreaterThanOrEqual(0)
    for (const a of allocated) expect(a.idx).toBeLessThan(64)
    const rows = await queryRows<{ seq: number; allocated: number; entries: number }>(
      database.db,
      sql`select l.seq, l.allocated, (select count(*)::int from status_list_entries e
            where e.tenant_id = l.tenant_id and e.list_id = l.id) as entries
          from status_lists l where l.tenant_id = ${tenant} and l.key_chain_id = ${keyChainId} order by l.seq`,
    )
    // The first list filled to its capacity, the second took the rest; nothing else was opened.
    expect(rows).toStrictEqual([
      { seq: 1, allocated: 32, entries: 32 },
      { seq: 2, allocated: 18, entries: 18 },
    ])
    // A status change of one session reaches only its own entry.
    const changed = await lists.change({ sessionId: 'ses_parallel7' }, STATUS_INVALID, async () => {})
    expect(changed).toStrictEqual({ outcome: 'changed', credentials: 1, changed: 1 })
  })

  it('issue 44: a batch on a list with room is reserved and its random indexes claimed in one statement', async () => {
    const lists = createStatusListRepository(database.db, tenant)
    const keyChainId = `chain-${crypto.randomUUID().slice(0, 8)}`
    expect((await post('/api/key-chains', { source: 'generate', id: keyChainId })).status).toBe(201)
    const allocate = () =>
      lists.allocate({
        keyChainId,
        count: 3,
        sessionId: `ses_${crypto.randomUUID().slice(0, 8)}`,
        credentialConfigurationId: 'employee',
        handle: null,
        // 2^20 entries: three picks collide with a held index about once in 10^5 runs.
        shape: { size: 2 ** 20, bits: 1, capacity: 2 ** 19 },
      })
    await allocate() // opens the key chain's first list
    const before = database.stats().statements
    const batch = await allocate()
    expect(database.stats().statements - before).toBe(1)
    expect(new Set(batch.map((a) => a.idx)).size).toBe(3)
    expect(new Set(batch.map((a) => a.listId)).size).toBe(1)
  })

  it('F-32, F-35: a key chain that signs status lists cannot be deleted (409), so its lists keep answering; deleting the tenant takes both', async () => {
    const keyChainId = `signing-${crypto.randomUUID().slice(0, 8)}`
    const configId = `short-lived-${crypto.randomUUID().slice(0, 8)}`
    expect((await post('/api/key-chains', { source: 'generate', id: keyChainId })).status).toBe(201)
    const created = await post('/api/credentials', {
      id: configId,
      config: { format: 'dc+sd-jwt', vct: 'urn:example:short:1' },
      keyChainId,
      statusManagement: true,
      fields: [{ path: ['given_name'], type: 'string' }],
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const issued = await issueOverHttp({
      apiBase: baseUrl,
      auth,
      configurationId: configId,
      claims: { given_name: 'Erika' },
    })
    const entry = statusOf(issued.credential) as { idx: number; uri: string }
    // The configuration goes; the credentials it issued still name the list.
    expect((await call('DELETE', `/api/credentials/${configId}`, undefined, auth)).status).toBe(204)
    const refused = await call('DELETE', `/api/key-chains/${keyChainId}`, undefined, auth)
    expect(refused).toStrictEqual({
      status: 409,
      body: expect.objectContaining({
        code: 'conflict',
        detail: `key chain '${keyChainId}' signs status lists that issued credentials point to`,
      }),
    })
    expect((await call('GET', `/api/key-chains/${keyChainId}`, undefined, auth)).status).toBe(200)
    expect(await entryAt(entry)).toBe(0)

    // A tenant with key chains and status lists is deleted with both.
    const gone = `sl-gone-${crypto.randomUUID().slice(0, 8)}`
    const goneAuth = await clientOf(gone, rootAuth, ['key:manage'])
    expect((await post('/api/key-chains', { source: 'generate', id: 'k' }, goneAuth)).status).toBe(201)
    await createStatusListRepository(database.db, gone).allocate({
      keyChainId: 'k',
      count: 1,
      sessionId: 'ses_gone',
      credentialConfigurationId: 'c',
      handle: null,
      shape: { size: 64, bits: 2, capacity: 32 },
    })
    expect((await call('DELETE', `/api/tenants/${gone}`, undefined, rootAuth)).status).toBe(204)
    const left = await queryRows<{ n: number }>(
      database.db,
      sql`select count(*)::int as n from status_lists where tenant_id = ${gone}`,
    )
    expect(left).toStrictEqual([{ n: 0 }])
  })
})
