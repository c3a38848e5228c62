import { X509Certificate } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  buildTrustedList,
  createTestListSigner,
  issueTestCertificate,
  signTrustedList,
  type TestListPointer,
  type TestListSigner,
} from '@credential-service/crypto/testing'
import { testDatabases } from '@credential-service/db-schema/testing'
import { refreshDueTrustLists } from '@credential-service/server-kit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, type TestClient } from './harness'

const QC_CA = 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC'
const HOUR = 3_600_000

/** A list server answering each path with its body (none: 404), counting requests per path. */
async function startListServer() {
  const bodies = new Map<string, string>()
  const hits = new Map<string, number>()
  const server: Server = createServer((req, res) => {
    const path = req.url ?? ''
    hits.set(path, (hits.get(path) ?? 0) + 1)
    const body = bodies.get(path)
    if (body === undefined) return res.writeHead(404).end()
    res.writeHead(200, { 'content-type': 'application/xml' }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { bodies, hits, url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

/**
 * Issue 25: the refresh job follows an ETSI TS 119 612 list of trusted lists (source `etsi-lotl`)
 * to the national lists it points to, each checked with its pointer's certificates.
 */
describe.each(testDatabases({ alone: true, ownPostgres: true }))(
  'lists of trusted lists on $name',
  (testDatabase) => {
    let h: Harness
    let admin: TestClient
    let lotlSigner: TestListSigner
    let deSigner: TestListSigner
    let atSigner: TestListSigner
    let intruder: TestListSigner
    let deCa: string
    let atCa: string
    let lists: Awaited<ReturnType<typeof startListServer>>
    const outbound = { allowHttp: true, allowedHosts: ['127.0.0.1'], maxResponseBytes: 1024 * 1024 }
    const refresh = (now = new Date()) =>
      refreshDueTrustLists({ db: h.database.db, outbound, now: () => now })

    beforeAll(async () => {
      h = await createHarness(testDatabase, {
        env: {
          OUTBOUND_ALLOW_HTTP: 'true',
          OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
          TRUST_LIST_REFRESH_CHECK_SECONDS: '3600',
        },
      })
      admin = await h.createClient(h.tenantA, ['presentation:config'])
      lotlSigner = await createTestListSigner('CN=LOTL Operator')
      deSigner = await createTestListSigner('CN=DE Scheme Operator', 'P-256')
      atSigner = await createTestListSigner('CN=AT Scheme Operator')
      intruder = await createTestListSigner('CN=Intruder')
      deCa = (await issueTestCertificate({ subject: 'CN=DE QC CA', ca: true })).pem
      atCa = (await issueTestCertificate({ subject: 'CN=AT QC CA', ca: true })).pem
      lists = await startListServer()
    }, 120_000)
    afterAll(async () => {
      await lists?.close()
      await h?.close()
    })

    const api = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
      h.app.inject({ method, url, headers: admin.auth, ...(payload === undefined ? {} : { payload }) })
    const status = async (id: string) => (await api('GET', `/api/trust-lists/${id}`)).json().status
    const national = (
      territory: string,
      ca: string,
      signer: TestListSigner,
      nextUpdate = new Date(Date.now() + HOUR),
    ) =>
      signTrustedList(
        buildTrustedList({
          issued: new Date(),
          nextUpdate,
          territory,
          services: [{ type: QC_CA, certificates: [ca] }],
        }),
        signer,
      )
    /** Serves a LOTL at /<prefix>/lotl.xml pointing to DE and AT lists at /<prefix>/de.xml and at.xml (and a PDF). */
    const serveLotl = async (
      prefix: string,
      options: { nextUpdate?: Date; pointers?: TestListPointer[] } = {},
    ) => {
      const at = (path: string) => `${lists.url}/${prefix}/${path}`
      const pointers = options.pointers ?? [
        { location: at('de.xml'), territory: 'DE', certificates: [deSigner.certificatePem] },
        {
          location: at('de.pdf'),
          territory: 'DE',
          certificates: [deSigner.certificatePem],
          mimeType: 'application/pdf',
        },
        { location: at('at.xml'), territory: 'AT', certificates: [atSigner.certificatePem] },
      ]
      lists.bodies.set(
        `/${prefix}/lotl.xml`,
        await signTrustedList(
          buildTrustedList({
            issued: new Date(),
            nextUpdate: options.nextUpdate ?? new Date(Date.now() + HOUR),
            pointers,
          }),
          lotlSigner,
        ),
      )
      return at('lotl.xml')
    }
    const create = async (url: string, extra: Record<string, unknown> = {}) => {
      const id = random('lotl')
      const created = await api('POST', '/api/trust-lists', {
        id,
        source: {
          type: 'etsi-lotl',
          url,
          signerCertificates: [lotlSigner.certificatePem],
          refreshSeconds: 60,
          ...extra,
        },
        graceSeconds: 0,
      })
      expect(created.statusCode, created.body).toBe(201)
      return id
    }

    it('ETSI TS 119 612 §5.3.13: an etsi-lotl list holds the CA certificates of both pointed national lists (XML pointers only), nextUpdate the earliest; territories keeps one', async () => {
      const prefix = random('two')
      const deNextUpdate = new Date(Date.now() + HOUR / 2)
      lists.bodies.set(`/${prefix}/de.xml`, await national('DE', deCa, deSigner, deNextUpdate))
      lists.bodies.set(`/${prefix}/at.xml`, await national('AT', atCa, atSigner))
      const url = await serveLotl(prefix)
      const all = await create(url)
      const onlyAt = await create(url, { territories: ['AT'] })
      await refresh()

      const both = await status(all)
      expect(both).toMatchObject({ state: 'current', certificateCount: 2, lastError: null })
      expect(both.nextUpdate).toBe(deNextUpdate.toISOString())
      const stored = (await h.database.db.query.trustLists.findMany()).find((row) => row.id === all)
      expect(stored?.certificates.map((pem) => new X509Certificate(pem).subject).sort()).toEqual([
        'CN=AT QC CA',
        'CN=DE QC CA',
      ])
      expect(await status(onlyAt)).toMatchObject({ state: 'current', certificateCount: 1, lastError: null })
      expect(lists.hits.get(`/${prefix}/de.xml`)).toBe(1)
      expect(lists.hits.get(`/${prefix}/de.pdf`)).toBeUndefined()
    })

    it('ETSI TS 119 612 §5.3.13: a pointed list signed by a key not in its pointer, unreachable, or of another territory fails the whole refresh naming its territory and URL; the last good content is kept', async () => {
      const prefix = random('bad')
      lists.bodies.set(`/${prefix}/de.xml`, await national('DE', deCa, deSigner))
      lists.bodies.set(`/${prefix}/at.xml`, await national('AT', atCa, atSigner))
      const id = await create(await serveLotl(prefix))
      await refresh()
      const good = await status(id)
      expect(good).toMatchObject({ state: 'current', certificateCount: 2 })

      lists.bodies.set(`/${prefix}/at.xml`, await national('AT', atCa, intruder))
      await refresh(new Date(Date.now() + 61_000))
      const refused = await status(id)
      expect(refused.lastError).toContain(`the trusted list of territory AT at ${lists.url}/${prefix}/at.xml`)
      expect(refused.lastError).toMatch(/does not verify/)
      expect(refused).toMatchObject({ state: 'current', certificateCount: 2, fetchedAt: good.fetchedAt })

      lists.bodies.delete(`/${prefix}/at.xml`)
      await refresh(new Date(Date.now() + 2 * 61_000))
      const gone = await status(id)
      expect(gone.lastError).toContain('trusted list of AT: the list server answered 404')
      expect(gone).toMatchObject({ certificateCount: 2, fetchedAt: good.fetchedAt })

      // AT's key signing a list of another territory: the pointer vouches for AT's list only.
      lists.bodies.set(`/${prefix}/at.xml`, await national('DE', atCa, atSigner))
      await refresh(new Date(Date.now() + 3 * 61_000))
      const elsewhere = await status(id)
      expect(elsewhere.lastError).toContain(`territory AT at ${lists.url}/${prefix}/at.xml`)
      expect(elsewhere.lastError).toContain('its SchemeTerritory is DE')
      expect(elsewhere).toMatchObject({ certificateCount: 2, fetchedAt: good.fetchedAt })
    })

    it('ETSI TS 119 612 §5.3.13, §5.7: a tampered list of lists, or a pointed list whose XAdES CertDigest names another certificate, is refused', async () => {
      const prefix = random('tamper')
      lists.bodies.set(`/${prefix}/de.xml`, await national('DE', deCa, deSigner))
      lists.bodies.set(`/${prefix}/at.xml`, await national('AT', atCa, atSigner))
      const url = await serveLotl(prefix)
      const lotl = lists.bodies.get(`/${prefix}/lotl.xml`) as string
      // Pointing AT's list to the intruder's key changes what was signed.
      const base64 = (pem: string) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '')
      lists.bodies.set(
        `/${prefix}/lotl.xml`,
        lotl.replace(base64(atSigner.certificatePem), base64(intruder.certificatePem)),
      )
      expect(lists.bodies.get(`/${prefix}/lotl.xml`)).not.toBe(lotl)
      const tampered = await create(url)
      await refresh()
      const refused = await status(tampered)
      expect(refused).toMatchObject({ state: 'pending', certificateCount: 0 })
      expect(refused.lastError).toMatch(/does not verify/)

      lists.bodies.set(`/${prefix}/lotl.xml`, lotl)
      lists.bodies.set(
        `/${prefix}/de.xml`,
        await signTrustedList(
          buildTrustedList({
            issued: new Date(),
            nextUpdate: new Date(Date.now() + HOUR),
            territory: 'DE',
            services: [{ type: QC_CA, certificates: [deCa] }],
          }),
          deSigner,
          { xades: { certificatePem: atSigner.certificatePem } },
        ),
      )
      const wrongDigest = await create(url)
      await refresh()
      const digest = await status(wrongDigest)
      expect(digest).toMatchObject({ state: 'pending', certificateCount: 0 })
      expect(digest.lastError).toContain('territory DE')
      expect(digest.lastError).toContain(
        'no SigningCertificateV2 CertDigest matches the certificate that verified the signature',
      )
    })

    it('ETSI TS 119 612 §5.3.13: territories must be SchemeTerritory codes', async () => {
      const refused = await api('POST', '/api/trust-lists', {
        id: random('lotl'),
        source: {
          type: 'etsi-lotl',
          url: `${lists.url}/x.xml`,
          signerCertificates: [lotlSigner.certificatePem],
          territories: ['Germany'],
        },
      })
      expect(refused.statusCode).toBe(400)
      expect(refused.body).toContain('territories')
    })
  },
)
