import { createHash, X509Certificate } from 'node:crypto'
import { issueMdoc, issueSdJwtVc, MDL_DOCUMENT_SIGNER_EKU, type Signer } from '@credential-service/crypto'
import {
  certificateSigner,
  issueTestCertificate,
  type TestCertificate,
} from '@credential-service/crypto/testing'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { setGlobalConfig } from '@openid4vc/oauth2'
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import type { FastifyInstance } from 'fastify'
import { base64url, exportJWK, generateKeyPair } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { startAllInOne, tenantAdmin } from './harness'
import { resolveAndAnswer } from './oid4vp-wallet'
import { kbSigner, mdocDeviceResponse } from './wallet'

// biome-ignore lint/suspicious/noExplicitAny: test reads loosely typed JSON answers
type Loose = Record<string, any>

setGlobalConfig({ allowInsecureUrls: true })
const ISSUER = 'https://issuer.example.com'
const VCT = 'urn:example:age:1'
const DOCTYPE = 'org.iso.18013.5.1.mDL'
const NS = 'org.iso.18013.5.1'

/**
 * The `aki` of what a P-256 CA issues, computed apart from the code under test: RFC 5280 §4.2.1.2
 * method (1), the SHA-1 of the subjectPublicKey BIT STRING (the 65-byte uncompressed point).
 */
const akiOf = (pem: string) =>
  createHash('sha1')
    .update(new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' }).subarray(-65))
    .digest('base64url')

const sdJwtQuery = (extra: Loose = {}) => ({
  credentials: [
    {
      id: 'age',
      format: 'dc+sd-jwt',
      meta: { vct_values: [VCT] },
      claims: [{ path: ['age_over_18'] }],
      ...extra,
    },
  ],
})
const mdocQuery = (extra: Loose = {}) => ({
  credentials: [
    {
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: DOCTYPE },
      claims: [{ path: [NS, 'age_over_18'] }],
      ...extra,
    },
  ],
})

describe('DCQL trusted_authorities (OpenID4VP 1.0 §6.1.1, V-10, V-32) with an independent wallet', () => {
  let app: FastifyInstance
  let baseUrl: string
  let auth: Record<string, string>
  const tenant = `ta-${crypto.randomUUID().slice(0, 8)}`
  let rootA: TestCertificate
  let rootB: TestCertificate
  let leafA: TestCertificate
  let dsA: TestCertificate
  let leafB: TestCertificate
  let dsB: TestCertificate
  let akiA: string
  let akiB: string
  const api = async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Loose }> => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...auth },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return { status: response.status, json: (await response.json()) as Loose }
  }

  beforeAll(async () => {
    rootA = await issueTestCertificate({ subject: 'CN=Authority A,C=DE', ca: true })
    rootB = await issueTestCertificate({ subject: 'CN=Authority B,C=DE', ca: true })
    leafA = await issueTestCertificate({ subject: 'CN=Issuer A,C=DE', issuer: rootA, uris: [ISSUER] })
    leafB = await issueTestCertificate({ subject: 'CN=Issuer B,C=DE', issuer: rootB, uris: [ISSUER] })
    const ds = (issuer: TestCertificate) =>
      issueTestCertificate({ subject: 'CN=DS,C=DE', issuer, extendedKeyUsage: [MDL_DOCUMENT_SIGNER_EKU] })
    dsA = await ds(rootA)
    dsB = await ds(rootB)
    akiA = akiOf(rootA.pem)
    akiB = akiOf(rootB.pem)
    const port = await freePort()
    baseUrl = `http://localhost:${port}`
    const started = await startAllInOne(testDatabases().at(-1) as TestDatabase, baseUrl)
    app = started.app
    await app.listen({ host: '::', port })
    auth = (
      await tenantAdmin(app, started, tenant, ['key:manage', 'presentation:config', 'presentation:request'])
    ).admin
    expect((await api('POST', '/api/key-chains', { source: 'generate', id: 'keys' })).status).toBe(201)
  })
  afterAll(async () => {
    await app?.close()
  })

  const createConfig = (id: string, dcqlQuery: unknown, extra: Loose = {}) =>
    api('POST', '/api/presentations', {
      id,
      dcqlQuery,
      keyChainId: 'keys',
      responseMode: 'direct_post',
      trustAnchors: [rootA.pem, rootB.pem],
      ...extra,
    })

  /** The wallet's turn for a request of `configId`: the request it resolved and the session. */
  async function present(
    configId: string,
    vpToken: (request: Loose) => Promise<Record<string, string[]>>,
  ): Promise<{ request: Loose; session: Loose }> {
    const created = (await api('POST', '/api/presentation-requests', { presentationConfigId: configId })).json
    const answer = await resolveAndAnswer(created.authorizationRequestUri, vpToken)
    const session = (await api('GET', `/api/sessions/${created.sessionId}`)).json
    return { request: answer.request, session }
  }

  async function sdJwtVp(signer: Signer, request: Loose) {
    const holder = await generateKeyPair('ES256')
    const credential = await issueSdJwtVc({
      signer,
      issuer: ISSUER,
      vct: VCT,
      issuedAt: new Date(),
      expiresAt: new Date(Date.now() + 3_600_000),
      holderJwk: await exportJWK(holder.publicKey),
      claims: { age_over_18: true },
      disclosable: [['age_over_18']],
    })
    return new SDJwtVcInstance({
      hasher: digest,
      saltGenerator: generateSalt,
      kbSigner: kbSigner(holder.privateKey),
      kbSignAlg: 'ES256',
    }).present(
      credential,
      { age_over_18: true },
      {
        kb: { payload: { iat: Math.floor(Date.now() / 1000), nonce: request.nonce, aud: request.client_id } },
      },
    )
  }

  async function mdocVp(signer: Signer, request: Loose) {
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
    return mdocDeviceResponse({
      credential: base64url.encode(issued),
      holder,
      docType: DOCTYPE,
      clientId: request.client_id,
      nonce: request.nonce,
      responseUri: request.response_uri,
    })
  }

  it('§6.1.1.1: an SD-JWT VC and an mdoc from an issuer under the named authority verify', async () => {
    expect(
      (await createConfig('sd-a', sdJwtQuery({ trusted_authorities: [{ type: 'aki', values: [akiA] }] })))
        .status,
    ).toBe(201)
    expect(
      (await createConfig('mdoc-a', mdocQuery({ trusted_authorities: [{ type: 'aki', values: [akiA] }] })))
        .status,
    ).toBe(201)
    const sd = await present('sd-a', async (request) => ({
      age: [await sdJwtVp(certificateSigner(leafA, [leafA]), request)],
    }))
    expect(sd.request.dcql_query.credentials[0].trusted_authorities).toStrictEqual([
      { type: 'aki', values: [akiA] },
    ])
    expect(sd.session).toMatchObject({ status: 'verified', failureReason: null })
    const mdoc = await present('mdoc-a', async (request) => ({
      mdl: [await mdocVp(certificateSigner(dsA, [dsA]), request)],
    }))
    expect(mdoc.session).toMatchObject({ status: 'verified', failureReason: null })
  })

  it('§6.1.1.1: a trusted issuer under another authority is refused, SD-JWT VC and mdoc', async () => {
    const sd = await present('sd-a', async (request) => ({
      age: [await sdJwtVp(certificateSigner(leafB, [leafB]), request)],
    }))
    expect(sd.session).toMatchObject({
      status: 'failed',
      failureReason: `no certificate of the x5c chain has an authority key identifier the query's trusted_authorities name (aki ${akiA})`,
    })
    const mdoc = await present('mdoc-a', async (request) => ({
      mdl: [await mdocVp(certificateSigner(dsB, [dsB]), request)],
    }))
    expect(mdoc.session.status).toBe('failed')
    expect(mdoc.session.failureReason).toContain(
      `no certificate of the x5chain chain has an authority key identifier the query's trusted_authorities name (aki ${akiA})`,
    )
    // The same credentials pass the anchors alone: the query's authorities made the difference.
    expect((await createConfig('sd-any', sdJwtQuery())).status).toBe(201)
    const plain = await present('sd-any', async (request) => ({
      age: [await sdJwtVp(certificateSigner(leafB, [leafB]), request)],
    }))
    expect(plain.session.status).toBe('verified')
  })

  it('trustedAuthorities from-anchors: the request names every issuer trust anchor as aki, and the wallet reads it', async () => {
    const created = await createConfig('filled', sdJwtQuery(), { trustedAuthorities: 'from-anchors' })
    expect(created.status, JSON.stringify(created.json)).toBe(201)
    expect(created.json.trustedAuthorities).toBe('from-anchors')
    const keys = (await api('GET', '/api/key-chains/keys')).json
    const ownRoot = akiOf(keys.rootCertificate)
    const { request, session } = await present('filled', async (request) => ({
      age: [await sdJwtVp(certificateSigner(leafB, [leafB]), request)],
    }))
    // Issue 25: trustAnchors are a pem list of sorted PEMs, so A and B come in either order.
    const [authority] = request.dcql_query.credentials[0].trusted_authorities
    expect(authority.type).toBe('aki')
    expect(authority.values.slice(0, 2).sort()).toStrictEqual([akiA, akiB].sort())
    expect(authority.values.slice(2)).toStrictEqual([ownRoot])
    expect(session.status).toBe('verified')
  })

  it('HAIP 6.1.1, V-32: of a key chain whose chain the user provided, only its leaf is trusted, never the CA above it', async () => {
    const publicRoot = await issueTestCertificate({ subject: 'CN=Public CA,C=DE', ca: true })
    const own = await issueTestCertificate({ subject: 'CN=Tenant,C=DE', issuer: publicRoot, uris: [ISSUER] })
    const customer = await issueTestCertificate({
      subject: 'CN=Other customer,C=DE',
      issuer: publicRoot,
      uris: [ISSUER],
    })
    const imported = await api('POST', '/api/key-chains', {
      source: 'import',
      id: 'provided',
      privateKey: own.keys.privateJwk,
      certificateChain: [own.pem, publicRoot.pem],
    })
    expect(imported.status, JSON.stringify(imported.json)).toBe(201)
    expect(
      (
        await api('POST', '/api/presentations', {
          id: 'own',
          dcqlQuery: sdJwtQuery(),
          keyChainId: 'keys',
          responseMode: 'direct_post',
        })
      ).status,
    ).toBe(201)
    const mine = await present('own', async (request) => ({
      age: [await sdJwtVp(certificateSigner(own, [own, publicRoot]), request)],
    }))
    expect(mine.session).toMatchObject({ status: 'verified', failureReason: null })
    const theirs = await present('own', async (request) => ({
      age: [await sdJwtVp(certificateSigner(customer, [customer, publicRoot]), request)],
    }))
    expect(theirs.session).toMatchObject({
      status: 'failed',
      failureReason: 'the issuer does not chain to a trust anchor of this tenant',
    })
  })

  it("V-10, OpenID4VP 1.0 §6.1.1: aki values naming no trust anchor, an etsi_tl URL naming none of the configuration's lists, types the verifier cannot check, and from-anchors with acceptAnyIssuer are 422 at save", async () => {
    const other = await issueTestCertificate({ subject: 'CN=Unknown CA', ca: true })
    const stranger = akiOf(other.pem)
    const unknown = await createConfig(
      'unknown-aki',
      sdJwtQuery({
        trusted_authorities: [
          { type: 'aki', values: [akiA] },
          { type: 'aki', values: [stranger] },
        ],
      }),
    )
    expect(unknown.status).toBe(422)
    expect(unknown.json.errors).toStrictEqual([
      {
        path: 'body.dcqlQuery.credentials.0.trusted_authorities.1',
        message: `aki ${stranger} names none of this configuration's issuer trust anchors (its trust lists' certificates and the tenant's key chains): no credential under it could verify`,
      },
    ])
    // §6.1.1.2: an etsi_tl value must be the URL of one of the configuration's ETSI trusted lists.
    const etsi = await createConfig(
      'etsi',
      mdocQuery({ trusted_authorities: [{ type: 'etsi_tl', values: ['https://lotl.example.com/tl.xml'] }] }),
    )
    expect(etsi.status).toBe(422)
    expect(etsi.json.errors).toStrictEqual([
      {
        path: 'body.dcqlQuery.credentials.0.trusted_authorities.0.values.0',
        message:
          "etsi_tl https://lotl.example.com/tl.xml is the URL of none of this configuration's trust lists (trustListIds) of source type etsi-tl or etsi-lotl: no credential under it could verify",
      },
    ])
    const federation = await createConfig(
      'federation',
      mdocQuery({ trusted_authorities: [{ type: 'openid_federation', values: ['https://ta.example.com'] }] }),
    )
    expect(federation.status).toBe(422)
    expect(federation.json.errors).toStrictEqual([
      {
        path: 'body.dcqlQuery.credentials.0.trusted_authorities.0.type',
        message: 'openid_federation is checked for dc+sd-jwt and jwt_vc_json credentials only, not mso_mdoc',
      },
    ])
    const any = await createConfig('any', sdJwtQuery(), {
      trustedAuthorities: 'from-anchors',
      acceptAnyIssuer: true,
    })
    expect(any.status).toBe(422)
    expect(any.json.errors).toStrictEqual([
      {
        path: 'body.trustedAuthorities',
        message: 'acceptAnyIssuer trusts every issuer: there are no trust anchors to name',
      },
    ])
  })
})
