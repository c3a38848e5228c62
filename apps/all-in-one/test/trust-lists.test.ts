import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { anchorAuthorityKeyId, parseCertificate } from '@credential-service/crypto'
import {
  buildTrustedList,
  createTestListSigner,
  issueTestCertificate,
  signTrustedList,
  type TestListSigner,
} from '@credential-service/crypto/testing'
import type { Database } from '@credential-service/db-schema'
import { testDatabases } from '@credential-service/db-schema/testing'
import { refreshDueTrustLists } from '@credential-service/server-kit'
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import type { FastifyInstance } from 'fastify'
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, startAllInOneWorld } from './harness'
import { kbSigner } from './wallet'

// biome-ignore lint/suspicious/noExplicitAny: request object claims are read loosely in tests
type Loose = Record<string, any>

const PUBLIC_URL = 'https://credentials.example.com'
const VCT = 'urn:eudi:pid:1'
const PID_PROVIDER = 'http://uri.etsi.org/Svc/Svctype/Provider/PID'

/**
 * End to end: tenant B issues a PID; tenant A trusts B's issuing root only through an ETSI TS 119
 * 612 list that the refresh job of the running service fetches from a local list server.
 */
// Their own databases: the refresh job claims the due lists of every tenant it can see.
describe.each(testDatabases({ alone: true, ownPostgres: true }))(
  'trust lists in presentations on $name',
  (testDatabase) => {
    let app: FastifyInstance
    let rp: string
    let root: Record<string, string>
    let issuer: string
    const auth: Record<string, Record<string, string>> = {}
    let signer: TestListSigner
    const served = { body: undefined as string | undefined }
    /** Bodies of particular paths (a list of lists and the lists it points to); others get `served`. */
    const servedAt = new Map<string, string>()
    let db: Database
    let server: Server
    let listUrl: string

    const post = (url: string, payload: unknown, headers: Record<string, string>) =>
      app.inject({ method: 'POST', url, headers, payload: payload as object })

    beforeAll(async () => {
      server = createServer((req, res) => {
        const body = servedAt.get(req.url ?? '') ?? served.body
        if (body === undefined) return res.writeHead(503).end()
        res.writeHead(200, { 'content-type': 'application/xml' }).end(body)
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      listUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tl.xml`
      signer = await createTestListSigner()
      const started = await startAllInOneWorld(testDatabase, 'presentation-flow', PUBLIC_URL, {
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
        TRUST_LIST_REFRESH_CHECK_SECONDS: '1',
      })
      app = started.app
      db = started.database.db
      await app.ready()
      rp = started.tenants.a.id
      root = started.root
      issuer = started.tenants.b.id
      auth[rp] = started.tenants.a.auth
      auth[issuer] = started.tenants.b.auth
    }, 120_000)
    afterAll(async () => {
      await app?.close()
      await new Promise((resolve) => server?.close(resolve))
    })

    async function issue(tenant: string) {
      const offer = (
        await post(
          '/api/offers',
          {
            credentialConfigurationIds: ['pid'],
            claims: { pid: { given_name: 'Erika', age_over_18: true } },
            byReference: false,
          },
          auth[tenant] as Record<string, string>,
        )
      ).json()
      const code =
        offer.credentialOffer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code'][
          'pre-authorized_code'
        ]
      const accessToken = (
        await app.inject({
          method: 'POST',
          url: `/issuers/${tenant}/token`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({
            grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
            'pre-authorized_code': code,
          }).toString(),
        })
      ).json().access_token
      const nonce = (await app.inject({ method: 'POST', url: `/issuers/${tenant}/nonce` })).json().c_nonce
      const holder = await generateKeyPair('ES256')
      const proof = await new SignJWT({ nonce })
        .setProtectedHeader({
          alg: 'ES256',
          typ: 'openid4vci-proof+jwt',
          jwk: await exportJWK(holder.publicKey),
        })
        .setAudience(`${PUBLIC_URL}/issuers/${tenant}`)
        .setIssuedAt()
        .sign(holder.privateKey)
      const response = await post(
        `/issuers/${tenant}/credential`,
        { credential_configuration_id: 'pid', proofs: { jwt: [proof] } },
        { authorization: `Bearer ${accessToken}` },
      )
      return { credential: response.json().credentials[0].credential as string, holder }
    }

    /** Asks for the PID with `configId` at the RP and answers with the credential; the session after. */
    async function presentTo(configId: string, issued: Awaited<ReturnType<typeof issue>>) {
      const created = (
        await post(
          '/api/presentation-requests',
          { presentationConfigId: configId },
          auth[rp] as Record<string, string>,
        )
      ).json()
      const claims = decodeJwt(
        (await app.inject({ url: new URL(created.requestUri).pathname })).body,
      ) as Loose
      const vp = await new SDJwtVcInstance({
        hasher: digest,
        saltGenerator: generateSalt,
        kbSigner: kbSigner(issued.holder.privateKey),
        kbSignAlg: 'ES256',
      }).present(
        issued.credential,
        { age_over_18: true },
        {
          kb: { payload: { iat: Math.floor(Date.now() / 1000), nonce: claims.nonce, aud: claims.client_id } },
        },
      )
      await app.inject({
        method: 'POST',
        url: new URL(created.requestUri).pathname.replace('/requests/', '/responses/'),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          vp_token: JSON.stringify({ pid: [vp] }),
          state: claims.state,
        }).toString(),
      })
      return (
        await app.inject({
          url: `/api/sessions/${created.sessionId}`,
          headers: auth[rp] as Record<string, string>,
        })
      ).json()
    }

    it('verifies a credential whose issuer chains to a certificate of a named list, and refuses it once the list fails closed', async () => {
      const issuerRoot = (
        await app.inject({ url: '/api/key-chains/keys', headers: auth[issuer] as Record<string, string> })
      ).json().rootCertificate as string
      expect(issuerRoot).toContain('BEGIN CERTIFICATE')
      // Room for the first fetch, whose check starts the worker thread (from the TypeScript
      // sources here, some seconds on a loaded machine), and for the presentations after it.
      const nextUpdate = new Date(Date.now() + 20_000)
      served.body = await signTrustedList(
        buildTrustedList({
          issued: new Date(),
          nextUpdate,
          services: [{ type: PID_PROVIDER, certificates: [issuerRoot] }],
        }),
        signer,
      )
      const list = await post(
        '/api/trust-lists',
        {
          id: 'pid-providers',
          source: {
            type: 'etsi-tl',
            url: listUrl,
            signerCertificates: [signer.certificatePem],
            serviceTypes: [PID_PROVIDER],
          },
          graceSeconds: 0,
        },
        auth[rp] as Record<string, string>,
      )
      expect(list.statusCode, list.body).toBe(201)
      const plain = {
        keyChainId: 'keys',
        responseMode: 'direct_post',
        dcqlQuery: {
          credentials: [
            {
              id: 'pid',
              format: 'dc+sd-jwt',
              meta: { vct_values: [VCT] },
              claims: [{ path: ['age_over_18'] }],
            },
          ],
        },
      }
      for (const [id, extra] of [
        ['without-list', {}],
        ['with-list', { trustListIds: ['pid-providers'] }],
      ] as const) {
        const saved = await post(
          '/api/presentations',
          { id, ...plain, ...extra },
          auth[rp] as Record<string, string>,
        )
        expect(saved.statusCode, saved.body).toBe(201)
      }
      // The service's own refresh job fetches the list (every second here).
      for (let i = 0; i < 75; i += 1) {
        const status = (
          await app.inject({
            url: '/api/trust-lists/pid-providers',
            headers: auth[rp] as Record<string, string>,
          })
        ).json().status
        if (status.state === 'current') break
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      const issued = await issue(issuer)
      const refused = await presentTo('without-list', issued)
      expect(refused.status).toBe('failed')
      const verified = await presentTo('with-list', issued)
      expect(verified, JSON.stringify(verified)).toMatchObject({ status: 'verified', failureReason: null })
      // A tenant-bound scraper sees its tenant's series only, which are the ones asked about here.
      const created = await post(`/api/tenants/${rp}/clients`, { roles: ['metrics:read'] }, root)
      expect(created.statusCode, created.body).toBe(201)
      const scraper = created.json()
      const metrics = await app.inject({
        url: '/api/metrics',
        headers: await bearer(app, scraper.clientId, scraper.clientSecret),
      })
      expect(metrics.statusCode, metrics.body).toBe(200)
      expect(metrics.body).toMatch(
        new RegExp(`credential_service_trust_list_refreshes_total\\{tenant="${rp}",outcome="ok"\\} [1-9]`),
      )
      expect(metrics.body).toMatch(
        new RegExp(`credential_service_trust_list_age_seconds\\{tenant="${rp}",list="pid-providers"\\} \\d`),
      )

      // The list server goes away; past NextUpdate + grace the list contributes nothing.
      served.body = undefined
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, nextUpdate.getTime() - Date.now() + 300)),
      )
      const closed = await presentTo('with-list', issued)
      expect(closed.status).toBe('failed')
      expect(closed.failureReason).toContain("trust list(s) 'pid-providers' (past NextUpdate + grace)")
      expect(closed.failureReason).toContain('fail closed')
    }, 60_000)

    it('OpenID4VP 1.0 §6.1.1: from-anchors names the list by URL (etsi_tl) and its certificates by key identifier (aki); an etsi_tl query accepts an issuer on the list and refuses a trusted issuer off it', async () => {
      const issuerRoot = (
        await app.inject({ url: '/api/key-chains/keys', headers: auth[issuer] as Record<string, string> })
      ).json().rootCertificate as string
      served.body = await signTrustedList(
        buildTrustedList({
          issued: new Date(),
          nextUpdate: new Date(Date.now() + 3_600_000),
          services: [{ type: PID_PROVIDER, certificates: [issuerRoot] }],
        }),
        signer,
      )
      const etsiUrl = listUrl.replace('/tl.xml', '/etsi-pids.xml')
      const list = await post(
        '/api/trust-lists',
        {
          id: 'etsi-pids',
          source: { type: 'etsi-tl', url: etsiUrl, signerCertificates: [signer.certificatePem] },
        },
        auth[rp] as Record<string, string>,
      )
      expect(list.statusCode, list.body).toBe(201)
      for (let i = 0; i < 50; i += 1) {
        const status = (
          await app.inject({ url: '/api/trust-lists/etsi-pids', headers: auth[rp] as Record<string, string> })
        ).json().status
        if (status.state === 'current') break
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      const query = (trusted?: unknown) => ({
        credentials: [
          {
            id: 'pid',
            format: 'dc+sd-jwt',
            meta: { vct_values: [VCT] },
            claims: [{ path: ['age_over_18'] }],
            ...(trusted ? { trusted_authorities: trusted } : {}),
          },
        ],
      })
      const listAki = (await anchorAuthorityKeyId(parseCertificate(issuerRoot))) as string
      for (const [id, extra] of [
        ['etsi-query', { dcqlQuery: query([{ type: 'etsi_tl', values: [etsiUrl] }]) }],
        // §6.1.1.1: the list's certificates are issuer trust anchors an aki value may name.
        ['list-aki', { dcqlQuery: query([{ type: 'aki', values: [listAki] }]) }],
        ['from-lists', { dcqlQuery: query(), trustedAuthorities: 'from-anchors' }],
      ] as const) {
        const saved = await post(
          '/api/presentations',
          { id, keyChainId: 'keys', responseMode: 'direct_post', trustListIds: ['etsi-pids'], ...extra },
          auth[rp] as Record<string, string>,
        )
        expect(saved.statusCode, saved.body).toBe(201)
      }

      const created = (
        await post(
          '/api/presentation-requests',
          { presentationConfigId: 'from-lists' },
          auth[rp] as Record<string, string>,
        )
      ).json()
      const claims = decodeJwt(
        (await app.inject({ url: new URL(created.requestUri).pathname })).body,
      ) as Loose
      const filled = claims.dcql_query.credentials[0].trusted_authorities as {
        type: string
        values: string[]
      }[]
      expect(filled.find((authority) => authority.type === 'etsi_tl')).toEqual({
        type: 'etsi_tl',
        values: [etsiUrl],
      })
      expect(filled.find((authority) => authority.type === 'aki')?.values).toContain(listAki)

      const onList = await presentTo('etsi-query', await issue(issuer))
      expect(onList, JSON.stringify(onList)).toMatchObject({ status: 'verified', failureReason: null })
      // The relying party's own key chain is an issuer trust anchor, but not on the list.
      const offList = await presentTo('etsi-query', await issue(rp))
      expect(offList.status).toBe('failed')
      expect(offList.failureReason).toContain(
        `matches none of the query's trusted_authorities (OpenID4VP 1.0 §6.1.1): the issuer does not chain to a current certificate of the trusted list ${etsiUrl}`,
      )
      const akiOnList = await presentTo('list-aki', await issue(issuer))
      expect(akiOnList, JSON.stringify(akiOnList)).toMatchObject({ status: 'verified' })
    }, 60_000)

    it('issue 25, ETSI TS 119 612 §5.3.13: a configuration naming an etsi-lotl list accepts a credential whose issuer CA is on a pointed national list (etsi_tl naming the LOTL URL, from-anchors filling it), and refuses it once the national list no longer lists it', async () => {
      const issuerRoot = (
        await app.inject({ url: '/api/key-chains/keys', headers: auth[issuer] as Record<string, string> })
      ).json().rootCertificate as string
      const lotlSigner = await createTestListSigner('CN=LOTL Operator')
      const deSigner = await createTestListSigner('CN=DE Scheme Operator', 'P-256')
      const atSigner = await createTestListSigner('CN=AT Scheme Operator')
      const atCa = (await issueTestCertificate({ subject: 'CN=AT PID CA', ca: true })).pem
      const national = (territory: string, certificates: string[], signer: TestListSigner) =>
        signTrustedList(
          buildTrustedList({
            issued: new Date(),
            nextUpdate: new Date(Date.now() + 3_600_000),
            territory,
            services: [{ type: PID_PROVIDER, certificates }],
          }),
          signer,
        )
      const origin = new URL(listUrl).origin
      servedAt.set('/eu/de.xml', await national('DE', [issuerRoot], deSigner))
      servedAt.set('/eu/at.xml', await national('AT', [atCa], atSigner))
      servedAt.set(
        '/eu/lotl.xml',
        await signTrustedList(
          buildTrustedList({
            issued: new Date(),
            nextUpdate: new Date(Date.now() + 3_600_000),
            pointers: [
              { location: `${origin}/eu/de.xml`, territory: 'DE', certificates: [deSigner.certificatePem] },
              { location: `${origin}/eu/at.xml`, territory: 'AT', certificates: [atSigner.certificatePem] },
            ],
          }),
          lotlSigner,
        ),
      )
      const lotlUrl = `${origin}/eu/lotl.xml`
      const list = await post(
        '/api/trust-lists',
        {
          id: 'eu-lotl',
          source: {
            type: 'etsi-lotl',
            url: lotlUrl,
            signerCertificates: [lotlSigner.certificatePem],
            serviceTypes: [PID_PROVIDER],
            refreshSeconds: 60,
          },
          graceSeconds: 0,
        },
        auth[rp] as Record<string, string>,
      )
      expect(list.statusCode, list.body).toBe(201)
      const query = (trusted?: unknown) => ({
        credentials: [
          {
            id: 'pid',
            format: 'dc+sd-jwt',
            meta: { vct_values: [VCT] },
            claims: [{ path: ['age_over_18'] }],
            ...(trusted ? { trusted_authorities: trusted } : {}),
          },
        ],
      })
      for (const [id, extra] of [
        ['lotl-query', { dcqlQuery: query([{ type: 'etsi_tl', values: [lotlUrl] }]) }],
        ['lotl-anchors', { dcqlQuery: query(), trustedAuthorities: 'from-anchors' }],
      ] as const) {
        const saved = await post(
          '/api/presentations',
          { id, keyChainId: 'keys', responseMode: 'direct_post', trustListIds: ['eu-lotl'], ...extra },
          auth[rp] as Record<string, string>,
        )
        expect(saved.statusCode, saved.body).toBe(201)
      }
      let status: Loose = {}
      for (let i = 0; i < 50; i += 1) {
        status = (
          await app.inject({ url: '/api/trust-lists/eu-lotl', headers: auth[rp] as Record<string, string> })
        ).json().status
        if (status.state === 'current') break
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(status).toMatchObject({ state: 'current', certificateCount: 2, lastError: null })

      const created = (
        await post(
          '/api/presentation-requests',
          { presentationConfigId: 'lotl-anchors' },
          auth[rp] as Record<string, string>,
        )
      ).json()
      const claims = decodeJwt(
        (await app.inject({ url: new URL(created.requestUri).pathname })).body,
      ) as Loose
      expect(
        (claims.dcql_query.credentials[0].trusted_authorities as Loose[]).find(
          (authority) => authority.type === 'etsi_tl',
        ),
      ).toEqual({ type: 'etsi_tl', values: [lotlUrl] })

      const onList = await presentTo('lotl-query', await issue(issuer))
      expect(onList, JSON.stringify(onList)).toMatchObject({ status: 'verified', failureReason: null })

      // DE's list no longer lists the issuer's CA; the next refresh (a process one interval later) reads it.
      servedAt.set('/eu/de.xml', await national('DE', [atCa], deSigner))
      await refreshDueTrustLists({
        db,
        outbound: { allowHttp: true, allowedHosts: ['127.0.0.1'], maxResponseBytes: 1024 * 1024 },
        now: () => new Date(Date.now() + 61_000),
      })
      const after = (
        await app.inject({ url: '/api/trust-lists/eu-lotl', headers: auth[rp] as Record<string, string> })
      ).json().status
      expect(after).toMatchObject({ state: 'current', certificateCount: 1, lastError: null })
      let offList: Loose = {}
      for (let i = 0; i < 10; i += 1) {
        offList = await presentTo('lotl-query', await issue(issuer))
        if (offList.status === 'failed') break
        await new Promise((resolve) => setTimeout(resolve, 300))
      }
      expect(offList.status).toBe('failed')
      // The list's certificates are the issuer anchors too: the anchor check refuses it first.
      expect(offList.failureReason).toContain('the issuer does not chain to a trust anchor of this tenant')
    }, 60_000)
  },
)
