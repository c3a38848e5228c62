import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createCertificate, generateKeyPair } from '@credential-service/crypto'
import {
  buildListOfTrustedEntities,
  buildTrustedList,
  createTestListSigner,
  issueTestCertificate,
  signListOfTrustedEntities,
  signTrustedList,
  type TestListSigner,
} from '@credential-service/crypto/testing'
import { testDatabases } from '@credential-service/db-schema/testing'
import { refreshDueTrustLists } from '@credential-service/server-kit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, type TestClient } from './harness'

const QC_CA = 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC'
const PID = 'http://uri.etsi.org/Svc/Svctype/Provider/PID'
const HOUR = 3_600_000
const dcql = {
  credentials: [
    {
      id: 'pid',
      format: 'dc+sd-jwt',
      meta: { vct_values: ['urn:example:pid'] },
      claims: [{ path: ['given_name'] }],
    },
  ],
}

/** A trusted list server: answers what `body` holds (undefined: 503) on any path, and counts requests per path. */
async function startListServer() {
  const state = { body: undefined as string | undefined, hits: new Map<string, number>() }
  const server: Server = createServer((req, res) => {
    state.hits.set(req.url ?? '', (state.hits.get(req.url ?? '') ?? 0) + 1)
    if (state.body === undefined) return res.writeHead(503).end()
    res.writeHead(200, { 'content-type': 'application/xml' }).end(state.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { state, url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

// Their own databases: the refresh job claims the due lists of every tenant it can see.
describe.each(testDatabases({ alone: true, ownPostgres: true }))('trust lists on $name', (testDatabase) => {
  let h: Harness
  let admin: TestClient
  let adminB: TestClient
  let issuanceAdmin: TestClient
  let anchor: string
  let signer: TestListSigner
  let otherSigner: TestListSigner
  let qcCa: string
  let pidCa: string
  let lists: Awaited<ReturnType<typeof startListServer>>
  const outbound = { allowHttp: true, allowedHosts: ['127.0.0.1'], maxResponseBytes: 1024 * 1024 }
  /** One run of the refresh job as a process at `now` runs it. */
  const refresh = (now = new Date()) => refreshDueTrustLists({ db: h.database.db, outbound, now: () => now })

  beforeAll(async () => {
    h = await createHarness(testDatabase, {
      env: {
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
        // The test runs the job itself, at the times it chooses.
        TRUST_LIST_REFRESH_CHECK_SECONDS: '3600',
      },
    })
    admin = await h.createClient(h.tenantA, ['presentation:config', 'key:manage'])
    adminB = await h.createClient(h.tenantB, ['presentation:config'])
    issuanceAdmin = await h.createClient(h.tenantA, ['issuance:config'])
    const keys = await generateKeyPair('ES256')
    anchor = await createCertificate({
      subjectPublicJwk: keys.publicJwk,
      subject: 'CN=Issuer Root',
      issuerPrivateJwk: keys.privateJwk,
      validityDays: 30,
      ca: true,
    })
    signer = await createTestListSigner()
    otherSigner = await createTestListSigner('CN=Not The Operator')
    qcCa = (await issueTestCertificate({ subject: 'CN=QC CA', ca: true })).pem
    pidCa = (await issueTestCertificate({ subject: 'CN=PID Provider', ca: true })).pem
    lists = await startListServer()
  }, 120_000)
  afterAll(async () => {
    await lists?.close()
    await h?.close()
  })

  const api = (
    client: TestClient,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ) => h.app.inject({ method, url, headers: client.auth, ...(payload === undefined ? {} : { payload }) })
  const signedList = (nextUpdate: Date, issued = new Date()) =>
    signTrustedList(
      buildTrustedList({
        issued,
        nextUpdate,
        services: [
          { type: QC_CA, certificates: [qcCa] },
          { type: PID, certificates: [pidCa] },
        ],
      }),
      signer,
    )
  const etsi = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    source: {
      type: 'etsi-tl',
      url: `${lists.url}/${id}.xml`,
      signerCertificates: [signer.certificatePem],
      ...extra,
    },
    graceSeconds: 0,
  })

  it('creates, reads, lists, replaces and deletes a PEM trust list on both mounts; issuance:config may too', async () => {
    const id = random('tl')
    const created = await api(admin, 'POST', '/api/trust-lists', {
      id,
      source: { type: 'pem', certificates: [anchor] },
    })
    expect(created.statusCode, created.body).toBe(201)
    expect(created.json()).toMatchObject({
      id,
      description: null,
      graceSeconds: 86_400,
      source: { type: 'pem', certificates: [anchor] },
      status: { state: 'current', certificateCount: 1, lastError: null },
    })
    const read = await api(admin, 'GET', `/api/tenants/${h.tenantA}/trust-lists/${id}`)
    expect(read.json().id).toBe(id)
    const listed = await api(issuanceAdmin, 'GET', '/api/trust-lists')
    expect(listed.json().items.map((item: { id: string }) => item.id)).toContain(id)
    const replaced = await api(issuanceAdmin, 'PUT', `/api/trust-lists/${id}`, {
      id,
      description: 'Issuers we know',
      source: { type: 'pem', certificates: [anchor] },
    })
    expect(replaced.statusCode, replaced.body).toBe(200)
    expect(replaced.json().description).toBe('Issuers we know')
    const audit = await api(h.root, 'GET', `/api/audit-events?resourceType=trust-list&tenantId=${h.tenantA}`)
    expect(
      audit
        .json()
        .items.map((event: { action: string }) => event.action)
        .sort(),
    ).toEqual(['create', 'update'])
    expect((await api(admin, 'DELETE', `/api/trust-lists/${id}`)).statusCode).toBe(204)
    expect((await api(admin, 'GET', `/api/trust-lists/${id}`)).statusCode).toBe(404)
  })

  it('422 names the field (400 for a body the schema refuses): a PEM that does not parse, a URL the outbound policy refuses, a bad signer', async () => {
    const bad = await api(admin, 'POST', '/api/trust-lists', {
      id: random('tl'),
      source: { type: 'pem', certificates: [anchor, 'not a certificate'] },
    })
    expect(bad.statusCode).toBe(422)
    expect(bad.json().errors).toEqual([{ path: 'body.source.certificates.1', message: expect.any(String) }])
    const url = await api(admin, 'POST', '/api/trust-lists', {
      id: random('tl'),
      source: { type: 'etsi-tl', url: 'ftp://lists.example/tl.xml', signerCertificates: ['nope'] },
    })
    expect(url.statusCode).toBe(422)
    expect(
      url
        .json()
        .errors.map((error: { path: string }) => error.path)
        .sort(),
    ).toEqual(['body.source.signerCertificates.0', 'body.source.url'])
    const shape = await api(admin, 'POST', '/api/trust-lists', {
      id: random('tl'),
      source: { type: 'pem', certificates: [] },
    })
    // Like the other collections: a body that breaks the schema is a 400, a rule a 422.
    expect(shape.statusCode).toBe(400)
  })

  it('tenants never see each other’s lists, nor name them in a presentation configuration', async () => {
    const id = random('tl')
    expect(
      (await api(admin, 'POST', '/api/trust-lists', { id, source: { type: 'pem', certificates: [anchor] } }))
        .statusCode,
    ).toBe(201)
    expect((await api(adminB, 'GET', `/api/trust-lists/${id}`)).statusCode).toBe(404)
    expect((await api(adminB, 'GET', `/api/tenants/${h.tenantA}/trust-lists/${id}`)).statusCode).toBe(404)
    const listed = await api(adminB, 'GET', '/api/trust-lists')
    expect(listed.json().items.map((item: { id: string }) => item.id)).not.toContain(id)
    const keyChainB = await h.createClient(h.tenantB, ['presentation:config', 'key:manage'])
    const chain = (await api(keyChainB, 'POST', '/api/key-chains', { source: 'generate' })).json().id
    const named = await api(keyChainB, 'POST', '/api/presentations', {
      id: random('pc'),
      dcqlQuery: dcql,
      keyChainId: chain,
      trustListIds: [id],
    })
    expect(named.statusCode).toBe(422)
    expect(named.json().errors).toEqual([
      { path: 'body.trustListIds.0', message: `no trust list '${id}' in this tenant` },
    ])
    expect((await api(adminB, 'DELETE', `/api/trust-lists/${id}`)).statusCode).toBe(404)
    expect((await api(admin, 'GET', `/api/trust-lists/${id}`)).statusCode).toBe(200)
  })

  it('a presentation configuration names lists by id: unknown ids are 422, a named list cannot be deleted (409)', async () => {
    const id = random('tl')
    await api(admin, 'POST', '/api/trust-lists', { id, source: { type: 'pem', certificates: [anchor] } })
    const keyChainId = (await api(admin, 'POST', '/api/key-chains', { source: 'generate' })).json().id
    const config = { id: random('pc'), dcqlQuery: dcql, keyChainId }
    const unknown = await api(admin, 'POST', '/api/presentations', {
      ...config,
      trustListIds: [id, 'missing'],
    })
    expect(unknown.statusCode).toBe(422)
    expect(unknown.json().errors).toEqual([
      { path: 'body.trustListIds.1', message: "no trust list 'missing' in this tenant" },
    ])
    const saved = await api(admin, 'POST', '/api/presentations', { ...config, trustListIds: [id] })
    expect(saved.statusCode, saved.body).toBe(201)
    expect(saved.json().trustListIds).toEqual([id])
    const refused = await api(admin, 'DELETE', `/api/trust-lists/${id}`)
    expect(refused.statusCode).toBe(409)
    expect(refused.json().detail).toContain(config.id)
    await api(admin, 'PUT', `/api/presentations/${config.id}`, config)
    expect((await api(admin, 'DELETE', `/api/trust-lists/${id}`)).statusCode).toBe(204)
  })

  it('fetches a signed ETSI TS 119 612 list, keeps it through failed fetches, and fails closed past NextUpdate + grace', async () => {
    const start = Date.now()
    // Long enough for the first fetch to land before it under a loaded test run.
    const nextUpdate = new Date(start + 6000)
    lists.state.body = await signedList(nextUpdate)
    const id = random('tl')
    const created = await api(admin, 'POST', '/api/trust-lists', etsi(id, { refreshSeconds: 60 }))
    expect(created.json().status).toMatchObject({ state: 'pending', certificateCount: 0 })
    await refresh()
    const fetched = (await api(admin, 'GET', `/api/trust-lists/${id}`)).json()
    expect(fetched.status).toMatchObject({ state: 'current', certificateCount: 2, lastError: null })
    expect(fetched.status.nextUpdate).toBe(nextUpdate.toISOString())

    // The list server stops answering: the held content stays in use until NextUpdate + grace.
    lists.state.body = undefined
    await refresh(new Date(Date.now() + 61_000))
    const failed = (await api(admin, 'GET', `/api/trust-lists/${id}`)).json()
    expect(failed.status).toMatchObject({ state: 'current', certificateCount: 2 })
    expect(failed.status.lastError).toMatch(/503/)
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, nextUpdate.getTime() - Date.now() + 200)))
    const expired = (await api(admin, 'GET', `/api/trust-lists/${id}`)).json()
    expect(expired.status.state).toBe('expired')

    // A good fetch brings it back.
    lists.state.body = await signedList(new Date(Date.now() + HOUR))
    await refresh(new Date(Date.now() + 2 * 61_000))
    expect((await api(admin, 'GET', `/api/trust-lists/${id}`)).json().status.state).toBe('current')
  })

  it('keeps the previous content when a fetched list was changed after signing', async () => {
    lists.state.body = await signedList(new Date(Date.now() + HOUR))
    const id = random('tl')
    await api(admin, 'POST', '/api/trust-lists', etsi(id, { refreshSeconds: 60 }))
    await refresh()
    const good = (await api(admin, 'GET', `/api/trust-lists/${id}`)).json().status
    expect(good.certificateCount).toBe(2)
    const tampered = (await signedList(new Date(Date.now() + HOUR))).replace(
      /<tsl:ServiceTypeIdentifier>[^<]+<\/tsl:ServiceTypeIdentifier>/,
      `<tsl:ServiceTypeIdentifier>${PID}</tsl:ServiceTypeIdentifier>`,
    )
    lists.state.body = tampered
    await refresh(new Date(Date.now() + 61_000))
    const after = (await api(admin, 'GET', `/api/trust-lists/${id}`)).json().status
    expect(after.lastError).toMatch(/does not verify/)
    expect(after).toMatchObject({ state: 'current', certificateCount: 2, fetchedAt: good.fetchedAt })
  })

  it('refuses a list signed by a certificate not among signerCertificates, and filters by service type', async () => {
    lists.state.body = await signedList(new Date(Date.now() + HOUR))
    const wrong = random('tl')
    await api(admin, 'POST', '/api/trust-lists', {
      ...etsi(wrong),
      source: {
        type: 'etsi-tl',
        url: `${lists.url}/${wrong}.xml`,
        signerCertificates: [otherSigner.certificatePem],
      },
    })
    const filtered = random('tl')
    await api(admin, 'POST', '/api/trust-lists', etsi(filtered, { serviceTypes: [PID] }))
    await refresh()
    const refused = (await api(admin, 'GET', `/api/trust-lists/${wrong}`)).json().status
    expect(refused).toMatchObject({ state: 'pending', certificateCount: 0 })
    expect(refused.lastError).toMatch(/does not verify/)
    const only = (await api(admin, 'GET', `/api/trust-lists/${filtered}`)).json().status
    expect(only).toMatchObject({ state: 'current', certificateCount: 1 })
  })

  it('fetches a signed ETSI TS 119 602 list of trusted entities (JSON, compact JWS); a changed source starts over', async () => {
    const PID_ISSUANCE = 'http://uri.etsi.org/19602/SvcType/PID/Issuance'
    const payload = buildListOfTrustedEntities({
      issued: new Date(),
      nextUpdate: new Date(Date.now() + HOUR),
      services: [
        { type: PID_ISSUANCE, certificates: [pidCa] },
        { type: 'http://uri.etsi.org/19602/SvcType/PID/Revocation', certificates: [qcCa] },
      ],
    })
    lists.state.body = await signListOfTrustedEntities(payload, signer)
    const id = random('tl')
    const lote = {
      id,
      source: {
        type: 'lote',
        url: `${lists.url}/${id}.jwt`,
        signerCertificates: [signer.certificatePem],
        serviceTypes: [PID_ISSUANCE],
      },
    }
    expect((await api(admin, 'POST', '/api/trust-lists', lote)).statusCode).toBe(201)
    await refresh()
    const fetched = (await api(admin, 'GET', `/api/trust-lists/${id}`)).json().status
    expect(fetched).toMatchObject({ state: 'current', certificateCount: 1, lastError: null })

    // Signed by another operator: refused, the held content stays.
    lists.state.body = await signListOfTrustedEntities(payload, otherSigner)
    await refresh(new Date(Date.now() + HOUR + 1000))
    const refused = (await api(admin, 'GET', `/api/trust-lists/${id}`)).json().status
    expect(refused).toMatchObject({ state: 'current', certificateCount: 1 })
    expect(refused.lastError).toMatch(/does not verify/)

    // Another signer set is another list: nothing held until it is fetched.
    const replaced = await api(admin, 'PUT', `/api/trust-lists/${id}`, {
      ...lote,
      source: { ...lote.source, signerCertificates: [otherSigner.certificatePem] },
    })
    expect(replaced.json().status).toMatchObject({ state: 'pending', certificateCount: 0, lastError: null })
  })

  it('fetches a list once per interval however often the job runs', async () => {
    lists.state.body = await signedList(new Date(Date.now() + HOUR))
    const id = random('tl')
    await api(admin, 'POST', '/api/trust-lists', etsi(id, { refreshSeconds: 600 }))
    const hits = () => lists.state.hits.get(`/${id}.xml`)
    await Promise.all([refresh(), refresh(), refresh()])
    await refresh(new Date(Date.now() + 60_000))
    expect(hits()).toBe(1)
    await refresh(new Date(Date.now() + 601_000))
    expect(hits()).toBe(2)
  })

  it('issue 36: a list whose ListIssueDateTime lies more than five minutes ahead is refused, not held as the newest', async () => {
    const id = random('tl')
    await api(admin, 'POST', '/api/trust-lists', etsi(id, { refreshSeconds: 60 }))
    const ahead = new Date(Date.now() + 86_400_000)
    lists.state.body = await signedList(new Date(Date.now() + 2 * 86_400_000), ahead)
    await refresh()
    const refused = (await api(admin, 'GET', `/api/trust-lists/${id}`)).json().status
    expect(refused).toMatchObject({ state: 'pending', certificateCount: 0, listIssuedAt: null })
    expect(refused.lastError).toBe(`its ListIssueDateTime ${ahead.toISOString()} is in the future`)
    // Held as the newest, it would have made this genuine list look older ("went back").
    lists.state.body = await signedList(new Date(Date.now() + HOUR), new Date(Date.now() + 60_000))
    await refresh(new Date(Date.now() + 61_000))
    expect((await api(admin, 'GET', `/api/trust-lists/${id}`)).json().status).toMatchObject({
      state: 'current',
      lastError: null,
    })
  })

  it('issue 36: a list longer than TRUST_LIST_MAX_BYTES fails its refresh, read no further than the bound', async () => {
    const id = random('tl')
    await api(admin, 'POST', '/api/trust-lists', etsi(id))
    lists.state.body = `${await signedList(new Date(Date.now() + HOUR))}${' '.repeat(70 * 1024)}`
    await refreshDueTrustLists({
      db: h.database.db,
      outbound,
      trustListLimits: { maxBytes: 64 * 1024, checkTimeoutMs: 60_000 },
    })
    const status = (await api(admin, 'GET', `/api/trust-lists/${id}`)).json().status
    expect(status).toMatchObject({ state: 'pending', certificateCount: 0 })
    expect(status.lastError).toBe(`trust list '${id}' answered more than ${64 * 1024} bytes`)
  })

  it('issue 36: a tenant holds at most 20 fetched lists (409 problem on the 21st, on both mounts); pem lists do not count, replacing a fetched list adds none', async () => {
    const held = (await api(adminB, 'GET', '/api/trust-lists?limit=100')).json().items as {
      id: string
      source: { type: string }
    }[]
    const made: string[] = []
    for (let n = held.filter((list) => list.source.type !== 'pem').length; n < 20; n++) {
      const id = random('tl')
      made.push(id)
      expect((await api(adminB, 'POST', '/api/trust-lists', etsi(id))).statusCode).toBe(201)
    }
    const over = random('tl')
    const refused = await api(adminB, 'POST', '/api/trust-lists', etsi(over))
    expect(refused.statusCode).toBe(409)
    expect(refused.headers['content-type']).toContain('application/problem+json')
    expect(refused.json()).toStrictEqual({
      type: 'https://credential-service.dev/problems/conflict',
      title: 'Conflict',
      status: 409,
      detail: 'the tenant holds 20 fetched trust lists, the most it may (20); delete one or use a pem list',
      instance: '/api/trust-lists',
      code: 'conflict',
    })
    expect((await api(adminB, 'POST', `/api/tenants/${h.tenantB}/trust-lists`, etsi(over))).statusCode).toBe(
      409,
    )
    expect((await api(adminB, 'GET', `/api/trust-lists/${over}`)).statusCode).toBe(404)
    const pem = { id: random('tl'), source: { type: 'pem', certificates: [anchor] } }
    expect((await api(adminB, 'POST', '/api/trust-lists', pem)).statusCode).toBe(201)
    // Turning a pem list into a fetched one adds one.
    expect((await api(adminB, 'PUT', `/api/trust-lists/${pem.id}`, etsi(pem.id))).statusCode).toBe(409)
    const first = made[0] as string
    expect(
      (await api(adminB, 'PUT', `/api/trust-lists/${first}`, etsi(first, { refreshSeconds: 600 })))
        .statusCode,
    ).toBe(200)
    // Another tenant's lists do not count.
    expect((await api(admin, 'POST', '/api/trust-lists', etsi(random('tl')))).statusCode).toBe(201)
    expect((await api(adminB, 'DELETE', `/api/trust-lists/${first}`)).statusCode).toBe(204)
    expect((await api(adminB, 'POST', '/api/trust-lists', etsi(over))).statusCode).toBe(201)
    // The job of the later tests is not to fetch them.
    for (const id of [...made.slice(1), over]) await api(adminB, 'DELETE', `/api/trust-lists/${id}`)
  })
})
