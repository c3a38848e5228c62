import { createServer as createHttpServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  issueMdoc,
  issueSdJwtVc,
  MDL_DOCUMENT_SIGNER_EKU,
  type Signer,
  signJws,
} from '@credential-service/crypto'
import {
  certificateSigner,
  issueTestCertificate,
  type TestCertificate,
} from '@credential-service/crypto/testing'
import { testDatabases } from '@credential-service/db-schema/testing'
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { StatusList } from '@sd-jwt/jwt-status-list'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import type { FastifyInstance } from 'fastify'
import {
  base64url,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  SignJWT,
} from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAllInOne, tenantAdmin } from './harness'
import { kbSigner, mdocDeviceResponse } from './wallet'

// biome-ignore lint/suspicious/noExplicitAny: request object claims are read loosely in tests
type Loose = Record<string, any>

const ISSUER = 'https://external.example.com'
const VCT = 'urn:external:1'
const DOCTYPE = 'org.iso.18013.5.1.mDL'
const NS = 'org.iso.18013.5.1'

describe.each(testDatabases())(
  'issuer chains through the verifier (RFC 5280 §6.1, S-127, S-131, S-132) on $name',
  (testDatabase) => {
    let app: FastifyInstance
    let auth: Record<string, string>
    let server: Server
    const lists: Record<string, string> = {}
    const tenant = `chains-${crypto.randomUUID().slice(0, 8)}`
    const post = (url: string, payload: unknown) =>
      app.inject({ method: 'POST', url, headers: auth, payload: payload as object })

    let root: TestCertificate
    let intermediate: TestCertificate
    let leaf: TestCertificate
    let documentSigner: TestCertificate
    /** An ordinary leaf of the root (no cA, no keyCertSign) that signs another leaf. */
    let ordinary: TestCertificate
    let evil: TestCertificate

    beforeAll(async () => {
      root = await issueTestCertificate({ subject: 'CN=External Root,C=DE', ca: true, pathLength: 1 })
      intermediate = await issueTestCertificate({
        subject: 'CN=External Intermediate,C=DE',
        issuer: root,
        ca: true,
        pathLength: 0,
      })
      leaf = await issueTestCertificate({
        subject: 'CN=External Issuer,C=DE',
        issuer: intermediate,
        uris: [ISSUER],
      })
      documentSigner = await issueTestCertificate({
        subject: 'CN=External DS,C=DE',
        issuer: intermediate,
        extendedKeyUsage: [MDL_DOCUMENT_SIGNER_EKU],
      })
      ordinary = await issueTestCertificate({ subject: 'CN=Ordinary,C=DE', issuer: root, uris: [ISSUER] })
      evil = await issueTestCertificate({
        subject: 'CN=Evil,C=DE',
        issuer: ordinary,
        uris: [ISSUER],
        extendedKeyUsage: [MDL_DOCUMENT_SIGNER_EKU],
      })
      server = createHttpServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/statuslist+jwt' }).end(lists[String(req.url)] ?? '')
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      // Seeded over HTTP on purpose (no world): the tests import trust chains through the API.
      const started = await startAllInOne(testDatabase, 'https://verifier.example.com', {
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      })
      app = started.app
      await app.ready()
      auth = (
        await tenantAdmin(app, started, tenant, ['key:manage', 'presentation:config', 'presentation:request'])
      ).admin
      await post('/api/key-chains', { source: 'generate', id: 'keys' })
      const sdJwtQuery = {
        credentials: [
          {
            id: 'ext',
            format: 'dc+sd-jwt',
            meta: { vct_values: [VCT] },
            claims: [{ path: ['age_over_18'] }],
          },
        ],
      }
      const mdocQuery = {
        credentials: [
          {
            id: 'mdl',
            format: 'mso_mdoc',
            meta: { doctype_value: DOCTYPE },
            claims: [{ path: [NS, 'age_over_18'] }],
          },
        ],
      }
      for (const [id, dcqlQuery, extra] of [
        ['sd-jwt', sdJwtQuery, {}],
        ['sd-jwt-any', sdJwtQuery, { acceptAnyIssuer: true }],
        ['mdoc', mdocQuery, {}],
      ] as const) {
        const created = await post('/api/presentations', {
          id,
          dcqlQuery,
          keyChainId: 'keys',
          responseMode: 'direct_post',
          trustAnchors: [root.pem],
          ...extra,
        })
        expect(created.statusCode, created.body).toBe(201)
      }
    })
    afterAll(async () => {
      server?.close()
      await app?.close()
    })

    async function request(configId: string) {
      const created = (await post('/api/presentation-requests', { presentationConfigId: configId })).json()
      const jar = (await app.inject({ url: new URL(created.requestUri).pathname })).body
      return { created, claims: decodeJwt(jar) as Loose }
    }

    async function respond(created: Loose, claims: Loose, id: string, vp: string) {
      await app.inject({
        method: 'POST',
        url: new URL(created.requestUri).pathname.replace('/requests/', '/responses/'),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          vp_token: JSON.stringify({ [id]: [vp] }),
          state: claims.state,
        }).toString(),
      })
      const session = await app.inject({ url: `/api/sessions/${created.sessionId}`, headers: auth })
      return session.json() as Loose
    }

    /** An SD-JWT VC signed with `signer`, presented to a request of `configId`: the session. */
    async function presentSdJwt(
      signer: Signer,
      options: {
        configId?: string
        iss?: string
        statusUri?: string
        typ?: string
        signedBy?: TestCertificate
      } = {},
    ) {
      const holder = await generateKeyPair('ES256')
      const credential = await issueSdJwtVc({
        signer,
        issuer: options.iss ?? ISSUER,
        vct: VCT,
        issuedAt: new Date(),
        expiresAt: new Date(Date.now() + 3_600_000),
        holderJwk: await exportJWK(holder.publicKey),
        claims: { age_over_18: true },
        disclosable: [['age_over_18']],
        ...(options.statusUri ? { status: { idx: 1, uri: options.statusUri } } : {}),
      })
      const presented = options.typ
        ? await withTyp(credential, options.typ, options.signedBy as TestCertificate)
        : credential
      const { created, claims } = await request(options.configId ?? 'sd-jwt')
      const vp = await new SDJwtVcInstance({
        hasher: digest,
        saltGenerator: generateSalt,
        kbSigner: kbSigner(holder.privateKey),
        kbSignAlg: 'ES256',
      }).present(
        presented,
        { age_over_18: true },
        {
          kb: { payload: { iat: Math.floor(Date.now() / 1000), nonce: claims.nonce, aud: claims.client_id } },
        },
      )
      return respond(created, claims, 'ext', vp)
    }

    /** The credential's issuer JWT signed again by `by` with another header `typ`, disclosures kept. */
    async function withTyp(credential: string, typ: string, by: TestCertificate) {
      const [jwt = '', ...disclosures] = credential.split('~')
      const header = decodeProtectedHeader(jwt)
      const resigned = await new SignJWT(decodeJwt(jwt))
        .setProtectedHeader({ ...header, alg: 'ES256', typ })
        .sign(await importJWK(by.keys.privateJwk, 'ES256'))
      return [resigned, ...disclosures].join('~')
    }

    async function presentMdoc(signer: Signer) {
      const holder = await generateKeyPair('ES256')
      const now = Date.now()
      const issued = await issueMdoc({
        signer,
        docType: DOCTYPE,
        namespaces: { [NS]: { age_over_18: true } },
        deviceJwk: await exportJWK(holder.publicKey),
        validFrom: new Date(now - 60_000),
        validUntil: new Date(now + 3_600_000),
        signedAt: new Date(now - 60_000),
      })
      const { created, claims } = await request('mdoc')
      const vp = await mdocDeviceResponse({
        credential: base64url.encode(issued),
        holder,
        docType: DOCTYPE,
        clientId: claims.client_id,
        nonce: claims.nonce,
        responseUri: claims.response_uri,
      })
      return respond(created, claims, 'mdl', vp)
    }

    it('RFC 5280 §6.1: root → intermediate CA (pathLenConstraint 0) → leaf verifies, SD-JWT VC and mdoc', async () => {
      expect(await presentSdJwt(certificateSigner(leaf, [leaf, intermediate]))).toMatchObject({
        status: 'verified',
        failureReason: null,
      })
      expect(
        await presentMdoc(certificateSigner(documentSigner, [documentSigner, intermediate])),
      ).toMatchObject({
        status: 'verified',
        failureReason: null,
      })
    })

    it('S-127, RFC 5280 §4.2.1.9: an SD-JWT VC signed by a leaf that an ordinary leaf issued is refused', async () => {
      expect(await presentSdJwt(certificateSigner(evil, [evil, ordinary]))).toMatchObject({
        status: 'failed',
        failureReason: 'x5c certificate 1 is not a CA (basicConstraints cA)',
      })
    })

    it('S-127, RFC 5280 §4.2.1.9: an mdoc whose x5chain leaf an ordinary leaf issued is refused', async () => {
      const session = await presentMdoc(certificateSigner(evil, [evil, ordinary]))
      expect(session.status).toBe('failed')
      expect(session.failureReason).toContain('x5chain certificate 1 is not a CA (basicConstraints cA)')
    })

    it('S-132, ISO 18013-5 Annex B.1.4: an mdoc signed without the document signer EKU is refused', async () => {
      const session = await presentMdoc(certificateSigner(leaf, [leaf, intermediate]))
      expect(session.status).toBe('failed')
      expect(session.failureReason).toContain(
        `the x5chain leaf lacks the extended key usage ${MDL_DOCUMENT_SIGNER_EKU}`,
      )
    })

    it('S-127, TSL §8.3: a status list token signed through a leaf-issued leaf is refused', async () => {
      const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/status/evil`
      const now = Math.floor(Date.now() / 1000)
      lists['/status/evil'] = await signJws(
        certificateSigner(evil, [evil, ordinary]),
        { typ: 'statuslist+jwt', x5c: [evil.der, ordinary.der] },
        {
          sub: uri,
          iat: now,
          exp: now + 3600,
          status_list: { bits: 1, lst: new StatusList([0, 0], 1).compressStatusList() },
        },
      )
      expect(
        await presentSdJwt(certificateSigner(leaf, [leaf, intermediate]), { statusUri: uri }),
      ).toMatchObject({
        status: 'failed',
        failureReason: 'status list: x5c certificate 1 is not a CA (basicConstraints cA)',
      })
    })

    it('SD-JWT VC §3.2.1: the issuer JWT\'s typ "MUST be dc+sd-jwt": vc+sd-jwt (the earlier drafts\' name) is accepted, another typ is refused', async () => {
      const signer = certificateSigner(leaf, [leaf, intermediate])
      expect(await presentSdJwt(signer, { typ: 'vc+sd-jwt', signedBy: leaf })).toMatchObject({
        status: 'verified',
      })
      for (const typ of ['JWT', 'kb+jwt'])
        expect(await presentSdJwt(signer, { typ, signedBy: leaf })).toMatchObject({
          status: 'failed',
          failureReason: `the SD-JWT typ '${typ}' is not dc+sd-jwt`,
        })
    })

    it('S-131, SD-JWT VC §3.5: an iss that is no SAN of the x5c leaf is refused, unless acceptAnyIssuer', async () => {
      const signer = certificateSigner(leaf, [leaf, intermediate])
      expect(await presentSdJwt(signer, { iss: 'https://other.example.org' })).toMatchObject({
        status: 'failed',
        failureReason:
          'iss https://other.example.org is not a subjectAltName (URI or dNSName) of the x5c leaf',
      })
      expect(
        await presentSdJwt(signer, { iss: 'https://other.example.org', configId: 'sd-jwt-any' }),
      ).toMatchObject({
        status: 'verified',
      })
    })
  },
)
