import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  buildTrustedList,
  createTestListSigner,
  issueTestCertificate,
  signTrustedList,
} from '@credential-service/crypto/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  clientToken,
  type FreshDatabase,
  freshDatabase,
  type ServiceProcess,
  startDeployment,
} from './processes'

const databaseUrl = process.env.TEST_DATABASE_URL

/**
 * Issue 25: every issuer, verifier and management process runs the trust list refresh job, and a
 * list is fetched once per refreshSeconds however many run it (claimDueTrustLists). Three
 * processes on one PostgreSQL database check every second; the list server counts the fetches.
 */
describe.runIf(databaseUrl)('a trust list fetched once per interval across processes (PostgreSQL)', () => {
  const root = { id: `root-${crypto.randomUUID()}`, secret: 'trust-list-processes-root-secret-0123' }
  const tenant = `tlp-${randomBytes(4).toString('hex')}`
  const processes: ServiceProcess[] = []
  let server: Server
  let hits = 0
  let body = ''
  let listUrl: string
  let api: (method: string, path: string, payload?: unknown) => Promise<Response>
  let database: FreshDatabase | undefined

  beforeAll(async () => {
    server = createServer((_req, res) => {
      hits += 1
      res.writeHead(200, { 'content-type': 'application/xml' }).end(body)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    listUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${tenant}.xml`
    // A database of its own: the processes' job claims the due lists of every tenant it can see.
    database = await freshDatabase()
    processes.push(
      ...(await startDeployment(database.url, root, ['management', 'verifier', 'issuer'], {
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
        TRUST_LIST_REFRESH_CHECK_SECONDS: '1',
      })),
    )
    const management = processes[0] as ServiceProcess
    const as = (token: string) => (method: string, path: string, payload?: unknown) =>
      fetch(`${management.origin}/api${path}`, {
        method,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
      })
    const operator = as(await clientToken(management.origin, root.id, root.secret))
    expect((await operator('POST', '/tenants', { id: tenant, name: tenant })).status).toBe(201)
    const admin = { clientId: `${tenant}-admin`, clientSecret: 'trust-list-processes-admin-secret-01' }
    await operator('POST', `/tenants/${tenant}/clients`, { ...admin, roles: ['presentation:config'] })
    api = as(await clientToken(management.origin, admin.clientId, admin.clientSecret))
  }, 120_000)

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()))
    await new Promise((resolve) => server?.close(resolve))
    await database?.drop()
  })

  it('three processes checking every second fetch a list with refreshSeconds 60 once', async () => {
    const signer = await createTestListSigner()
    const ca = await issueTestCertificate({ subject: 'CN=Listed CA', ca: true })
    body = await signTrustedList(
      buildTrustedList({
        issued: new Date(),
        nextUpdate: new Date(Date.now() + 3_600_000),
        services: [{ type: 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC', certificates: [ca.pem] }],
      }),
      signer,
    )
    const created = await api('POST', '/trust-lists', {
      id: 'eu',
      source: {
        type: 'etsi-tl',
        url: listUrl,
        signerCertificates: [signer.certificatePem],
        refreshSeconds: 60,
      },
    })
    expect(created.status, await created.clone().text()).toBe(201)
    // Each process runs the job about five times meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 5000))
    expect(hits).toBe(1)
    const status = (
      (await (await api('GET', '/trust-lists/eu')).json()) as { status: Record<string, unknown> }
    ).status
    expect(status).toMatchObject({ state: 'current', certificateCount: 1, lastError: null })
  }, 60_000)
})
