import { createHash, createPrivateKey, sign as nodeSign, X509Certificate } from 'node:crypto'
import { createMdocContext } from '@credential-service/crypto'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { setGlobalConfig } from '@openid4vc/oauth2'
import {
  CoseKey,
  DeviceRequest,
  DocRequest,
  Holder,
  IssuerSigned,
  ItemsRequest,
  SessionTranscript,
} from '@owf/mdoc'
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import type { FastifyInstance } from 'fastify'
import { base64url, calculateJwkThumbprint, exportJWK, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { startAllInOneWorld } from './harness'
import { resolveAndAnswer, walletClient } from './oid4vp-wallet'
import { type RegistrarStandIn, startRegistrarStandIn } from './registrar-standin'
import { issueOverHttp, kbSigner } from './wallet'

const mdocContext = createMdocContext(CoseKey)

/** The wallet's crypto for @owf/mdoc: the verifier's primitives plus COSE_Sign1 signing. */
const walletContext = {
  ...mdocContext,
  cose: {
    ...mdocContext.cose,
    sign1: {
      ...mdocContext.cose.sign1,
      sign: ({ toBeSigned, key }: { toBeSigned: Uint8Array; key: CoseKey }) =>
        new Uint8Array(
          nodeSign('sha256', toBeSigned, {
            key: createPrivateKey({ key: key.jwk as never, format: 'jwk' }),
            dsaEncoding: 'ieee-p1363',
          }),
        ),
    },
  },
} as typeof mdocContext

setGlobalConfig({ allowInsecureUrls: true })
const VCT = 'urn:eudi:pid:1'

describe('OpenID4VP 1.0 with an independent wallet (@openid4vc/openid4vp)', () => {
  let app: FastifyInstance
  let baseUrl: string
  let auth: Record<string, string>
  let registrar: RegistrarStandIn
  // biome-ignore lint/suspicious/noExplicitAny: test reads loosely typed JSON answers
  const api = async (path: string, body: unknown, headers: Record<string, string> = auth): Promise<any> =>
    await (
      await fetch(`${baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      })
    ).json()

  beforeAll(async () => {
    const port = await freePort()
    baseUrl = `http://localhost:${port}`
    registrar = await startRegistrarStandIn({ id: 'interop-rp', secret: 'interop-registrar-secret' })
    // The registrar stand-in listens on loopback http: the test policy allows exactly that.
    // The `verifier-interop` world (test/worlds/verifier-interop): tenant a issues `pid` and `mdl`
    // and asks for them in `plain`, `encrypted` and `mdl-check`.
    const started = await startAllInOneWorld(
      testDatabases().at(-1) as TestDatabase,
      'verifier-interop',
      baseUrl,
      {
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      },
    )
    app = started.app
    await app.listen({ host: '::', port })
    auth = started.tenants.a.auth
  })
  afterAll(async () => {
    await app.close()
    await registrar.close()
  })

  const issueCredential = () =>
    issueOverHttp({ apiBase: baseUrl, auth, configurationId: 'pid', claims: { given_name: 'Erika' } })

  it('OpenID4VP B.2: an mso_mdoc DeviceResponse made by @owf/mdoc, sent by the oid4vc-ts wallet (direct_post.jwt), verifies', async () => {
    // Issue the mdoc to a holder key over OpenID4VCI.
    const issued = await issueOverHttp({
      apiBase: baseUrl,
      auth,
      configurationId: 'mdl',
      claims: { 'org.iso.18013.5.1': { family_name: 'Mustermann' } },
    })
    const holder = issued.holder

    // The wallet: oid4vc-ts resolves the request; @owf/mdoc builds the DeviceResponse for it.
    const created = await api('/api/presentation-requests', { presentationConfigId: 'mdl-check' })
    const answer = await resolveAndAnswer(created.authorizationRequestUri, async (request) => {
      const encryptionKey = (request.client_metadata as { jwks: { keys: JWK[] } }).jwks.keys[0] as JWK
      const sessionTranscript = await SessionTranscript.forOid4Vp(
        {
          clientId: request.client_id as string,
          nonce: request.nonce as string,
          responseUri: request.response_uri as string,
          jwkThumbprint: base64url.decode(await calculateJwkThumbprint(encryptionKey)),
        },
        walletContext,
      )
      const deviceRequest = DeviceRequest.create({
        docRequests: [
          DocRequest.create({
            itemsRequest: ItemsRequest.create({
              docType: 'org.iso.18013.5.1.mDL',
              namespaces: { 'org.iso.18013.5.1': { family_name: false } },
            }),
          }),
        ],
      })
      const deviceResponse = await Holder.createDeviceResponseForDeviceRequest(
        {
          deviceRequest,
          sessionTranscript,
          issuerSigned: [IssuerSigned.fromEncodedForOid4Vci(issued.credential)],
          signature: {
            signingKey: CoseKey.fromJwk((await exportJWK(holder.privateKey)) as Record<string, unknown>),
          },
        },
        walletContext,
      )
      return { mdl: [deviceResponse.encodedForOid4Vp] }
    })
    expect(answer.status, answer.body).toBe(200)
    const session = await (
      await fetch(`${baseUrl}/api/sessions/${created.sessionId}`, { headers: auth })
    ).json()
    expect(session).toMatchObject({
      status: 'verified',
      claims: { mdl: [{ 'org.iso.18013.5.1': { family_name: 'Mustermann' } }] },
    })
  })

  for (const configId of ['plain', 'encrypted']) {
    it(`OpenID4VP §5, §8 (${configId === 'plain' ? 'direct_post' : 'direct_post.jwt'}): the wallet accepts our request and our verifier accepts its answer`, async () => {
      const { credential, holder } = await issueCredential()
      const created = await api('/api/presentation-requests', { presentationConfigId: configId })
      const presenter = new SDJwtVcInstance({
        hasher: digest,
        saltGenerator: generateSalt,
        kbSignAlg: 'ES256',
        kbSigner: kbSigner(holder.privateKey),
      })
      const answer = await resolveAndAnswer(created.authorizationRequestUri, async (request) => ({
        pid: [
          await presenter.present(
            credential,
            { given_name: true },
            {
              kb: {
                payload: {
                  iat: Math.floor(Date.now() / 1000),
                  nonce: request.nonce as string,
                  aud: request.client_id as string,
                },
              },
            },
          ),
        ],
      }))
      expect(answer.resolved.client.effective).toBe(created.clientId)
      expect(answer.status, answer.body).toBe(200)
      expect(answer.responseMode).toBe(configId === 'plain' ? 'direct_post' : 'direct_post.jwt')
      const session = await (
        await fetch(`${baseUrl}/api/sessions/${created.sessionId}`, { headers: auth })
      ).json()
      expect(session).toMatchObject({
        status: 'verified',
        claims: { pid: [{ given_name: 'Erika', vct: VCT }] },
      })
    })
  }

  it('OpenID4VP 1.0 §5.1, §5.9.3: the wallet accepts a request signed under a registrar access certificate and reads verifier_info', async () => {
    const put = async (path: string, body: unknown) =>
      (
        await fetch(`${baseUrl}${path}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', ...auth },
          body: JSON.stringify(body),
        })
      ).json()
    await put('/api/registrar', {
      baseUrl: registrar.baseUrl,
      tokenUrl: registrar.tokenUrl,
      clientId: 'interop-rp',
      clientSecret: 'interop-registrar-secret',
    })
    expect((await api('/api/registrar/relying-party', { name: 'Interop RP' })).relyingParty).not.toBeNull()
    // Over HTTP on purpose: the registrar certifies this key chain, then a configuration names it.
    await api('/api/key-chains', { source: 'generate', id: 'rp-keys' })
    const access = await api('/api/registrar/access-certificates', { keyChainId: 'rp-keys' })
    expect(access.certificateChain).toHaveLength(2)
    await api('/api/presentations', {
      id: 'registered',
      dcqlQuery: {
        credentials: [
          { id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: [VCT] }, claims: [{ path: ['given_name'] }] },
        ],
      },
      keyChainId: 'rp-keys',
      clientIdPrefix: 'x509_hash',
    })
    const registration = await api('/api/registrar/registration-certificates', {
      presentationConfigId: 'registered',
      purpose: [{ lang: 'en', content: 'Interop check' }],
      privacyPolicyUri: 'https://rp.example.com/privacy',
      supportUri: 'https://rp.example.com/support',
    })

    const created = await api('/api/presentation-requests', { presentationConfigId: 'registered' })
    const wallet = walletClient()
    const parsed = wallet.parseOpenid4vpAuthorizationRequest({
      authorizationRequest: created.authorizationRequestUri,
    })
    const resolved = await wallet.resolveOpenId4vpAuthorizationRequest({
      authorizationRequestPayload: parsed.params as never,
    })
    const leaf = new X509Certificate(access.certificateChain[0])
    expect(resolved.client.effective).toBe(
      `x509_hash:${createHash('sha256').update(leaf.raw).digest('base64url')}`,
    )
    expect((resolved.authorizationRequestPayload as Record<string, unknown>).verifier_info).toStrictEqual([
      { format: 'registration_cert', data: registration.jwt },
    ])
  })
})
