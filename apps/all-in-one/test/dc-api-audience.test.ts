import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { managementCaller, PID_QUERY, startDcApiWorld, VCT } from './dc-api-fixtures'
import { answerSignedByHand } from './text-holder'
import { issueOverHttp } from './wallet'

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
})
