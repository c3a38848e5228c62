import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { managementCaller, PID_QUERY, startDcApiWorld, VCT } from './dc-api-fixtures'
import { answerSignedByHand, dcApiResponseData, readSignedRequest } from './text-holder'
import { issueOverHttp, presentVcJwt } from './wallet'

const ORIGIN = 'https://rp.example'

/*
 * OpenID4VP 1.0 Appendix A.4: the audience of the response "MUST be the Origin, prefixed with
 * `origin:`" … "This is the case even for signed requests." B.3.6 (SD-JWT VC): the KB-JWT `aud`
 * follows A.4 over the DC API. The holder here is written from that text (text-holder.ts), not
 * with the OpenID4VP library the other suites use, which reads the signed case as the client id.
 */
describe('OpenID4VP 1.0 A.4: the audience of a signed DC API answer is origin:<origin> (hand-written holder, DC_API_SIGNED_CLIENT_ID_AUDIENCE off)', () => {
  let app: FastifyInstance
  let baseUrl: string
  let auth: Record<string, string>
  const { send, dcApiRequest } = managementCaller(
    () => baseUrl,
    () => auth,
  )

  /** A signed request for the page at ORIGIN, read by the holder, and the answer posted back. */
  const answerSigned = async (configId: string, aud: (request: Record<string, unknown>) => string) => {
    const created = await dcApiRequest(configId, ORIGIN)
    const signed = created.dcApi.requests.find((entry) => entry.protocol === 'openid4vp-v1-signed')
    const { credential, holder } = await issueOverHttp({
      apiBase: baseUrl,
      auth,
      configurationId: 'pid',
      claims: { given_name: 'Erika' },
    })
    const { request, answer } = await answerSignedByHand({
      data: signed?.data ?? {},
      origin: ORIGIN,
      credential,
      holderKey: holder.privateKey,
      aud,
    })
    const response = await fetch(created.dcApi.responseUri, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: ORIGIN },
      body: JSON.stringify(answer),
    })
    const session = (await send('GET', `/api/sessions/${created.sessionId}`)).body
    return { status: response.status, body: await response.json(), session, request }
  }

  beforeAll(async () => {
    const started = await startDcApiWorld()
    ;({ app, baseUrl } = started)
    auth = started.tenants.a.auth
    // A W3C VC (jwt_vc_json) configuration and a DC API query for it (issue 38, B.1 over A.4).
    expect(
      (
        await send('POST', '/api/credentials', {
          id: 'degree',
          config: { format: 'jwt_vc_json', type: ['VerifiableCredential', 'DegreeCredential'] },
          fields: [{ path: ['credentialSubject', 'given_name'], type: 'string' }],
          keyChainId: 'keys',
        })
      ).status,
    ).toBe(201)
    expect(
      (
        await send('POST', '/api/presentations', {
          id: 'vc-jwt',
          keyChainId: 'keys',
          dcqlQuery: {
            credentials: [
              {
                id: 'degree',
                format: 'jwt_vc_json',
                meta: { type_values: [['DegreeCredential']] },
                claims: [{ path: ['credentialSubject', 'given_name'] }],
              },
            ],
          },
          responseMode: 'direct_post.jwt',
          dcApi: { protocols: ['openid4vp-v1-signed'], origins: [ORIGIN] },
        })
      ).status,
    ).toBe(201)
    for (const [id, responseMode] of [
      ['aud-plain', 'direct_post'],
      ['aud-jwt', 'direct_post.jwt'],
    ])
      expect(
        (
          await send('POST', '/api/presentations', {
            id,
            keyChainId: 'keys',
            dcqlQuery: PID_QUERY,
            responseMode,
            dcApi: { protocols: ['openid4vp-v1-signed'], origins: [ORIGIN] },
          })
        ).status,
      ).toBe(201)
  })
  afterAll(async () => {
    await app.close()
  })

  for (const configId of ['aud-plain', 'aud-jwt'])
    it(`V-35, A.4 (${configId === 'aud-jwt' ? 'dc_api.jwt' : 'dc_api'}): a signed request answered with aud origin:<origin> verifies`, async () => {
      const answered = await answerSigned(configId, () => `origin:${ORIGIN}`)
      expect(answered.status, JSON.stringify(answered.body)).toBe(200)
      expect(answered.session).toMatchObject({
        status: 'verified',
        claims: { pid: [{ given_name: 'Erika', vct: VCT }] },
      })
    })

  it('S-88, A.4: aud origin:<another origin> is refused and fails the session', async () => {
    const answered = await answerSigned('aud-jwt', () => 'origin:https://phisher.example')
    expect(answered.status).toBe(400)
    expect(answered.body).toMatchObject({ error: 'invalid_request' })
    expect(answered.session).toMatchObject({
      status: 'failed',
      failureReason: expect.stringContaining(`aud is not 'origin:${ORIGIN}'`),
    })
  })

  it('V-35, A.4 ("even for signed requests"): aud = the signed request’s client_id is refused by default', async () => {
    const answered = await answerSigned('aud-jwt', (request) => String(request.client_id))
    expect(String(answered.request.client_id)).toMatch(/^x509_san_dns:/)
    expect(answered.status).toBe(400)
    expect(answered.session).toMatchObject({
      status: 'failed',
      failureReason: expect.stringContaining(`aud is not 'origin:${ORIGIN}'`),
    })
  })

  /** A jwt_vc_json answer to a signed request at ORIGIN: the VP JWT's `aud` as `aud(request)` makes it. */
  const answerVcJwt = async (aud: (request: Record<string, unknown>) => string) => {
    const created = await dcApiRequest('vc-jwt', ORIGIN)
    const signed = created.dcApi.requests.find((entry) => entry.protocol === 'openid4vp-v1-signed')
    const request = await readSignedRequest(signed?.data ?? {}, ORIGIN)
    const { credential, holder } = await issueOverHttp({
      apiBase: baseUrl,
      auth,
      configurationId: 'degree',
      claims: { credentialSubject: { given_name: 'Erika' } },
    })
    const vp = await presentVcJwt({ credential, holder, nonce: String(request.nonce), aud: aud(request) })
    const data = await dcApiResponseData(request, { degree: [vp] })
    const response = await fetch(created.dcApi.responseUri, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: ORIGIN },
      body: JSON.stringify({ protocol: 'openid4vp-v1-signed', data }),
    })
    const session = (await send('GET', `/api/sessions/${created.sessionId}`)).body
    return { status: response.status, session, request }
  }

  it('V-35, OpenID4VP 1.0 B.1.3 over A.4: a jwt_vc_json VP JWT with aud origin:<origin> answers a signed DC API request (dc_api.jwt)', async () => {
    const answered = await answerVcJwt(() => `origin:${ORIGIN}`)
    expect(answered.status).toBe(200)
    expect(answered.session).toMatchObject({
      status: 'verified',
      claims: { degree: [{ credentialSubject: { given_name: 'Erika' } }] },
    })
  })

  it('V-35, A.4 ("even for signed requests"): a jwt_vc_json VP JWT whose aud is the client_id is refused', async () => {
    const answered = await answerVcJwt((request) => String(request.client_id))
    expect(answered.status).toBe(400)
    expect(answered.session).toMatchObject({
      status: 'failed',
      failureReason: expect.stringContaining(`the VP JWT aud is not 'origin:${ORIGIN}'`),
    })
  })
})
