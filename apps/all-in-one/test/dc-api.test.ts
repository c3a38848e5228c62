import { createHash } from 'node:crypto'
import { Aes128Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from '@hpke/core'
import { setGlobalConfig } from '@openid4vc/oauth2'
import { DeviceRequest } from '@owf/mdoc'
import { Encoder } from 'cbor-x'
import type { FastifyInstance } from 'fastify'
import { base64url, calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type DcApiCreated,
  MDL,
  MDL_QUERY,
  managementCaller,
  NS,
  PID_QUERY,
  startDcApiWorld,
  VCT,
} from './dc-api-fixtures'
import { answerOverDcApi, type DcApiEntry } from './oid4vp-wallet'
import { answerSignedByHand } from './text-holder'
import { issueOverHttp, presentSdJwt, signedDeviceResponse } from './wallet'

setGlobalConfig({ allowInsecureUrls: true })
const ORIGIN = 'https://rp.example'
// CBOR as ISO 18013-5 uses it: byte strings as such, maps as maps.
const cbor = new Encoder({ useRecords: false, tagUint8Array: false, mapsAsObjects: false })
const hpke = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() })

describe('W3C Digital Credentials API: OpenID4VP 1.0 Appendix A and ISO/IEC 18013-7 Annex C, with independent wallets (@openid4vc/openid4vp, @owf/mdoc + cbor-x, @hpke/core)', () => {
  let app: FastifyInstance
  let baseUrl: string
  let auth: Record<string, string>
  let verifierId: string
  const { send, dcApiRequest } = managementCaller(
    () => baseUrl,
    () => auth,
  )
  const session = async (id: string) => (await send('GET', `/api/sessions/${id}`)).body
  const request = (presentationConfigId: string, origin = ORIGIN) =>
    dcApiRequest(presentationConfigId, origin)
  /** What the page does with the browser's answer: post it, as JSON, to the request's responseUri. */
  const post = async (responseUri: string, answer: DcApiEntry) => {
    const response = await fetch(responseUri, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: ORIGIN },
      body: JSON.stringify(answer),
    })
    return {
      status: response.status,
      // biome-ignore lint/suspicious/noExplicitAny: test reads loosely typed JSON answers
      body: (await response.json()) as any,
      cors: response.headers.get('access-control-allow-origin'),
    }
  }
  const entry = (created: DcApiCreated, protocol: string) => {
    const found = created.dcApi.requests.find((candidate) => candidate.protocol === protocol)
    if (!found) throw new Error(`no ${protocol} request in ${JSON.stringify(created.dcApi.requests)}`)
    return found
  }
  const issuePid = () =>
    issueOverHttp({ apiBase: baseUrl, auth, configurationId: 'pid', claims: { given_name: 'Erika' } })
  const issueMdl = () =>
    issueOverHttp({
      apiBase: baseUrl,
      auth,
      configurationId: 'mdl',
      claims: { [NS]: { family_name: 'Mustermann' } },
    })
  /** The holder's SD-JWT VC for the resolved request, its KB-JWT `aud` the wallet's effective client id. */
  const pidToken = async (nonce: string, aud: string) => {
    const { credential, holder } = await issuePid()
    return { pid: [await presentSdJwt({ credential, holder, disclose: { given_name: true }, nonce, aud })] }
  }
  const saveConfig = async (body: Record<string, unknown>) => {
    const saved = await send('POST', '/api/presentations', { keyChainId: 'keys', ...body })
    expect(saved.status, JSON.stringify(saved.body)).toBe(201)
  }

  beforeAll(async () => {
    // @openid4vc/openid4vp 0.4.6 binds a signed DC API answer to the client id, where OpenID4VP 1.0
    // A.4 says origin:<origin> "even for signed requests": the library is let in through the
    // compatibility setting here; dc-api-audience.test.ts holds the text's answer with it off.
    const started = await startDcApiWorld({ DC_API_SIGNED_CLIENT_ID_AUDIENCE: 'true' })
    ;({ app, baseUrl } = started)
    auth = started.tenants.a.auth
    verifierId = started.tenants.a.verifier
    for (const responseMode of ['direct_post', 'direct_post.jwt']) {
      const suffix = responseMode === 'direct_post' ? 'plain' : 'jwt'
      await saveConfig({
        id: `dc-pid-${suffix}`,
        dcqlQuery: PID_QUERY,
        responseMode,
        dcApi: { origins: [ORIGIN] },
      })
      await saveConfig({ id: `dc-mdl-${suffix}`, dcqlQuery: MDL_QUERY, responseMode })
    }
  })
  afterAll(async () => {
    await app.close()
  })

  describe('the request the page hands to navigator.credentials.get', () => {
    it('OpenID4VP 1.0 A.2, A.3, V-31: one entry per protocol in the default order; unsigned has no client_id, state or response_uri; signed carries client_id and expected_origins', async () => {
      const created = await request('dc-pid-jwt')
      expect(created.dcApi.requests.map((r) => r.protocol)).toStrictEqual([
        'openid4vp-v1-signed',
        'openid4vp-v1-unsigned',
      ])
      const unsigned = entry(created, 'openid4vp-v1-unsigned').data
      expect(unsigned).toMatchObject({
        response_type: 'vp_token',
        response_mode: 'dc_api.jwt',
        dcql_query: PID_QUERY,
      })
      for (const absent of ['client_id', 'state', 'response_uri', 'redirect_uri'])
        expect(unsigned).not.toHaveProperty(absent)
      const jws = entry(created, 'openid4vp-v1-signed').data.request as string
      expect(decodeProtectedHeader(jws)).toMatchObject({ typ: 'oauth-authz-req+jwt', x5c: expect.any(Array) })
      const claims = decodeJwt(jws)
      expect(claims).toMatchObject({
        client_id: expect.stringMatching(/^x509_san_dns:/),
        expected_origins: [ORIGIN],
        response_mode: 'dc_api.jwt',
        nonce: unsigned.nonce,
      })
      expect(claims).not.toHaveProperty('state')
      expect(created.dcApi.responseUri.startsWith(`${verifierId}/dc-api/`)).toBe(true)
      // The QR / deep link stays as the fallback for browsers without the API.
      expect(created.authorizationRequestUri).toMatch(/^openid4vp:\/\//)
    })

    it('an mdoc configuration also offers ISO/IEC 18013-7 Annex C (org-iso-mdoc): a DeviceRequest for the query and an EncryptionInfo with the request nonce', async () => {
      const created = await request('dc-mdl-jwt')
      expect(created.dcApi.requests.map((r) => r.protocol)).toStrictEqual([
        'openid4vp-v1-signed',
        'openid4vp-v1-unsigned',
        'org-iso-mdoc',
      ])
      const data = entry(created, 'org-iso-mdoc').data as { deviceRequest: string; encryptionInfo: string }
      const [docRequest, ...more] = DeviceRequest.decode(base64url.decode(data.deviceRequest)).docRequests
      expect(more).toHaveLength(0)
      expect(docRequest?.itemsRequest.docType).toBe(MDL)
      expect(
        [...(docRequest?.itemsRequest.namespaces ?? [])].map(([ns, els]) => [ns, [...els]]),
      ).toStrictEqual([[NS, [['family_name', false]]]])
      const [kind, info] = cbor.decode(base64url.decode(data.encryptionInfo)) as [
        string,
        Map<string, unknown>,
      ]
      expect(kind).toBe('dcapi')
      expect(base64url.encode(info.get('nonce') as Uint8Array)).toBe(
        entry(created, 'openid4vp-v1-unsigned').data.nonce,
      )
    })

    it('the configuration order is the offer order; the protocols and origins a configuration names are checked at save (422 naming the field)', async () => {
      await saveConfig({
        id: 'dc-signed-only',
        dcqlQuery: PID_QUERY,
        dcApi: { protocols: ['openid4vp-v1-signed'], origins: [ORIGIN] },
      })
      const created = await request('dc-signed-only')
      expect(created.dcApi.requests.map((r) => r.protocol)).toStrictEqual(['openid4vp-v1-signed'])

      const refused = await send('POST', '/api/presentations', {
        id: 'dc-refused',
        dcqlQuery: PID_QUERY,
        keyChainId: 'keys',
        clientIdPrefix: 'redirect_uri',
        dcApi: { protocols: ['org-iso-mdoc', 'openid4vp-v1-signed'] },
      })
      expect(refused.status).toBe(422)
      expect(refused.body.errors.map((e: { path: string }) => e.path)).toStrictEqual([
        'body.dcApi.protocols.0',
        'body.dcApi.protocols.1',
      ])
      const notOrigin = await send('POST', '/api/presentations', {
        id: 'dc-refused',
        dcqlQuery: PID_QUERY,
        keyChainId: 'keys',
        dcApi: { origins: ['https://rp.example/page'] },
      })
      expect(notOrigin.status).toBe(400)
    })

    it('S-88: transport dc-api needs the page origin, one the configuration lists; an origin without dc-api is refused', async () => {
      const without = await send('POST', '/api/presentation-requests', {
        presentationConfigId: 'dc-pid-jwt',
        transport: 'dc-api',
      })
      expect(without.status).toBe(400)
      const unlisted = await send('POST', '/api/presentation-requests', {
        presentationConfigId: 'dc-pid-jwt',
        transport: 'dc-api',
        origin: 'https://other.example',
      })
      expect(unlisted.status).toBe(422)
      expect(unlisted.body.errors).toStrictEqual([
        { path: 'body.origin', message: expect.stringContaining('dcApi.origins') },
      ])
      const stray = await send('POST', '/api/presentation-requests', {
        presentationConfigId: 'dc-pid-jwt',
        origin: ORIGIN,
      })
      expect(stray.status).toBe(400)
    })
  })

  describe('SD-JWT VC over OpenID4VP (A.4, B.3.6: KB-JWT aud origin:<origin>; the client id of a signed request only with DC_API_SIGNED_CLIENT_ID_AUDIENCE)', () => {
    for (const suffix of ['plain', 'jwt'] as const)
      for (const protocol of ['openid4vp-v1-unsigned', 'openid4vp-v1-signed'] as const)
        it(`V-31, V-28 (${protocol}, ${suffix === 'jwt' ? 'dc_api.jwt' : 'dc_api'}): the library wallet's answer posted by the page verifies (signed: its client id aud, by the compatibility setting); the session holds the claims`, async () => {
          const created = await request(`dc-pid-${suffix}`)
          let audience = ''
          const answer = await answerOverDcApi(entry(created, protocol), ORIGIN, (req, effective) => {
            audience = effective
            return pidToken(req.nonce as string, effective)
          })
          expect(audience).toEqual(
            protocol === 'openid4vp-v1-unsigned'
              ? `origin:${ORIGIN}`
              : expect.stringMatching(/^x509_san_dns:/),
          )
          if (suffix === 'jwt') expect(Object.keys(answer.data)).toStrictEqual(['response'])
          const posted = await post(created.dcApi.responseUri, answer)
          expect(posted.status, JSON.stringify(posted.body)).toBe(200)
          expect(posted.cors).toBe('*')
          expect(await session(created.sessionId)).toMatchObject({
            status: 'verified',
            claims: { pid: [{ given_name: 'Erika', vct: VCT }] },
            responseCodeRequired: false,
          })
        })

    it('V-35, S-88, A.4 with DC_API_SIGNED_CLIENT_ID_AUDIENCE on: the text’s answer to a signed request (aud origin:<origin>, hand-written holder) still verifies; aud origin:<another origin> is still refused', async () => {
      for (const [aud, status] of [
        [`origin:${ORIGIN}`, 'verified'],
        ['origin:https://phisher.example', 'failed'],
      ] as const) {
        const created = await request('dc-pid-jwt')
        const { credential, holder } = await issuePid()
        const { answer } = await answerSignedByHand({
          data: entry(created, 'openid4vp-v1-signed').data,
          origin: ORIGIN,
          credential,
          holderKey: holder.privateKey,
          aud: () => aud,
        })
        expect((await post(created.dcApi.responseUri, answer)).status).toBe(status === 'verified' ? 200 : 400)
        expect(await session(created.sessionId)).toMatchObject({ status })
      }
    })

    it('S-88, A.4: a presentation a phishing page relayed (bound to its own origin) is refused and fails the session', async () => {
      const created = await request('dc-pid-jwt')
      const relayed = await answerOverDcApi(
        entry(created, 'openid4vp-v1-unsigned'),
        'https://phisher.example',
        (req, effective) => pidToken(req.nonce as string, effective),
      )
      const posted = await post(created.dcApi.responseUri, relayed)
      expect(posted.status).toBe(400)
      expect(posted.body).toMatchObject({ error: 'invalid_request' })
      expect(posted.cors).toBe('*')
      expect(await session(created.sessionId)).toMatchObject({
        status: 'failed',
        failureReason: expect.stringContaining('aud'),
      })
    })

    it('S-88, A.3.2: a wallet refuses a signed request from a page whose origin is not in expected_origins', async () => {
      const created = await request('dc-pid-jwt')
      await expect(
        answerOverDcApi(entry(created, 'openid4vp-v1-signed'), 'https://phisher.example', (req, effective) =>
          pidToken(req.nonce as string, effective),
        ),
      ).rejects.toThrow(/expected_origins/)
    })

    it('S-88: an unsigned answer where the configuration offers only signed requests is refused', async () => {
      const created = await request('dc-signed-only')
      // The unsigned form of the same request, as a page that ignored the offer would make it.
      const signed = decodeJwt(entry(created, 'openid4vp-v1-signed').data.request as string)
      const { client_id: _c, expected_origins: _e, aud: _a, iat: _i, exp: _x, ...unsigned } = signed
      const answer = await answerOverDcApi(
        { protocol: 'openid4vp-v1-unsigned', data: unsigned },
        ORIGIN,
        (req, effective) => pidToken(req.nonce as string, effective),
      )
      const posted = await post(created.dcApi.responseUri, answer)
      expect(posted.status).toBe(400)
      expect(await session(created.sessionId)).toMatchObject({
        status: 'failed',
        failureReason: expect.stringContaining('was not offered'),
      })
    })

    it('a replayed answer and an answer to another request are refused; the other request fails', async () => {
      const first = await request('dc-pid-plain')
      const answer = await answerOverDcApi(entry(first, 'openid4vp-v1-unsigned'), ORIGIN, (req, effective) =>
        pidToken(req.nonce as string, effective),
      )
      expect((await post(first.dcApi.responseUri, answer)).status).toBe(200)
      const replay = await post(first.dcApi.responseUri, answer)
      expect(replay.status).toBe(400)
      expect(replay.body.error_description).toMatch(/already answered|no open request/)

      const second = await request('dc-pid-plain')
      expect((await post(second.dcApi.responseUri, answer)).status).toBe(400)
      expect(await session(second.sessionId)).toMatchObject({
        status: 'failed',
        failureReason: expect.stringMatching(/nonce/i),
      })
    })

    it('a request made for QR codes has no Digital Credentials API answer; the preflight lets any page post', async () => {
      const plain = (
        await send('POST', '/api/presentation-requests', { presentationConfigId: 'dc-pid-plain' })
      ).body
      expect(plain).not.toHaveProperty('dcApi')
      const requestId = new URL(plain.authorizationRequestUri).searchParams
        .get('request_uri')
        ?.split('/')
        .at(-1)
      const posted = await post(`${verifierId}/dc-api/${requestId}`, {
        protocol: 'openid4vp-v1-unsigned',
        data: {},
      })
      expect(posted.status).toBe(400)
      expect(posted.body.error_description).toMatch(/not made for the Digital Credentials API/)
      expect(await session(plain.sessionId)).toMatchObject({ status: 'pending' })

      const preflight = await fetch(`${verifierId}/dc-api/${requestId}`, {
        method: 'OPTIONS',
        headers: {
          origin: ORIGIN,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      })
      expect(preflight.status).toBe(204)
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*')
      expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type')
    })
  })

  describe('mdoc over OpenID4VP (B.2.6.2: OpenID4VPDCAPIHandover of the origin)', () => {
    /** The DeviceResponse signed over ["OpenID4VPDCAPIHandover", SHA-256(CBOR([origin, nonce, jwk thumbprint or null]))]. */
    const mdlToken = async (req: Record<string, unknown>, origin: string) => {
      const { credential, holder } = await issueMdl()
      const jwk = (req.client_metadata as { jwks?: { keys: JWK[] } }).jwks?.keys[0]
      const thumbprint =
        req.response_mode === 'dc_api.jwt' && jwk ? base64url.decode(await calculateJwkThumbprint(jwk)) : null
      const handover = createHash('sha256')
        .update(cbor.encode([origin, req.nonce, thumbprint]))
        .digest()
      const deviceResponse = await signedDeviceResponse({
        credential,
        holder,
        docType: MDL,
        sessionTranscript: [null, null, ['OpenID4VPDCAPIHandover', handover]],
      })
      return { mdl: [base64url.encode(deviceResponse)] }
    }

    for (const suffix of ['plain', 'jwt'] as const)
      it(`V-30, V-31 (${suffix === 'jwt' ? 'dc_api.jwt' : 'dc_api'}): a DeviceResponse over the page origin's handover verifies`, async () => {
        const created = await request(`dc-mdl-${suffix}`)
        const answer = await answerOverDcApi(entry(created, 'openid4vp-v1-signed'), ORIGIN, (req) =>
          mdlToken(req, ORIGIN),
        )
        const posted = await post(created.dcApi.responseUri, answer)
        expect(posted.status, JSON.stringify(posted.body)).toBe(200)
        expect(await session(created.sessionId)).toMatchObject({
          status: 'verified',
          claims: { mdl: [{ [NS]: { family_name: 'Mustermann' } }] },
        })
      })

    it('S-88, B.2.6.2: a DeviceResponse over another origin’s handover (wrong SessionTranscript) is refused', async () => {
      const created = await request('dc-mdl-jwt')
      const answer = await answerOverDcApi(entry(created, 'openid4vp-v1-unsigned'), ORIGIN, (req) =>
        mdlToken(req, 'https://phisher.example'),
      )
      expect((await post(created.dcApi.responseUri, answer)).status).toBe(400)
      expect(await session(created.sessionId)).toMatchObject({ status: 'failed' })
    })
  })

  describe('mdoc over ISO/IEC 18013-7 Annex C (org-iso-mdoc, HPKE)', () => {
    /**
     * The holder of Annex C: reads the EncryptionInfo, signs the DeviceResponse over the `dcapi`
     * SessionTranscript it computes for `origin`, seals it with HPKE (info = that transcript) to the
     * recipient key, and answers ["dcapi", {enc, cipherText}].
     */
    const annexCAnswer = async (data: Record<string, unknown>, origin: string, tamper = false) => {
      const encryptionInfo = data.encryptionInfo as string
      const [, info] = cbor.decode(base64url.decode(encryptionInfo)) as [string, Map<string, unknown>]
      const key = info.get('recipientPublicKey') as Map<number, Uint8Array>
      const recipientJwk = {
        kty: 'EC',
        crv: 'P-256',
        x: base64url.encode(key.get(-2) as Uint8Array),
        y: base64url.encode(key.get(-3) as Uint8Array),
      }
      const dcapiHash = createHash('sha256')
        .update(cbor.encode([encryptionInfo, origin]))
        .digest()
      const sessionTranscript = [null, null, ['dcapi', dcapiHash]]
      const { credential, holder } = await issueMdl()
      const deviceResponse = await signedDeviceResponse({
        credential,
        holder,
        docType: MDL,
        sessionTranscript,
      })
      const sealed = await hpke.seal(
        {
          recipientPublicKey: await hpke.kem.importKey('jwk', recipientJwk, true),
          info: cbor.encode(sessionTranscript),
        },
        deviceResponse,
      )
      const cipherText = new Uint8Array(sealed.ct)
      if (tamper) cipherText[5] = (cipherText[5] as number) ^ 1
      const response = cbor.encode([
        'dcapi',
        new Map<string, unknown>([
          ['enc', new Uint8Array(sealed.enc)],
          ['cipherText', cipherText],
        ]),
      ])
      return { protocol: 'org-iso-mdoc', data: { response: base64url.encode(response) } }
    }

    it('ISO/IEC 18013-7 Annex C: the HPKE-sealed DeviceResponse posted by the page opens and verifies', async () => {
      const created = await request('dc-mdl-jwt')
      const posted = await post(
        created.dcApi.responseUri,
        await annexCAnswer(entry(created, 'org-iso-mdoc').data, ORIGIN),
      )
      expect(posted.status, JSON.stringify(posted.body)).toBe(200)
      expect(await session(created.sessionId)).toMatchObject({
        status: 'verified',
        claims: { mdl: [{ [NS]: { family_name: 'Mustermann' } }] },
      })
    })

    for (const [name, make] of [
      [
        'tampered HPKE ciphertext',
        (created: DcApiCreated) => annexCAnswer(entry(created, 'org-iso-mdoc').data, ORIGIN, true),
      ],
      [
        'sealed for another origin (wrong dcapi SessionTranscript)',
        (created: DcApiCreated) =>
          annexCAnswer(entry(created, 'org-iso-mdoc').data, 'https://phisher.example'),
      ],
    ] as const)
      it(`ISO/IEC 18013-7 Annex C, S-88: ${name} is refused and fails the session`, async () => {
        const created = await request('dc-mdl-jwt')
        const posted = await post(created.dcApi.responseUri, await make(created))
        expect(posted.status).toBe(400)
        expect(await session(created.sessionId)).toMatchObject({
          status: 'failed',
          failureReason: expect.stringMatching(/Annex C/),
        })
      })

    it('ISO/IEC 18013-7 Annex C: an answer sealed for another request (its EncryptionInfo) is refused', async () => {
      const other = await request('dc-mdl-plain')
      const created = await request('dc-mdl-plain')
      const posted = await post(
        created.dcApi.responseUri,
        await annexCAnswer(entry(other, 'org-iso-mdoc').data, ORIGIN),
      )
      expect(posted.status).toBe(400)
      expect(await session(created.sessionId)).toMatchObject({ status: 'failed' })
    })
  })
})
