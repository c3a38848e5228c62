import { testDatabases } from '@credential-service/db-schema/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AllInOne, bearer, startAllInOne } from './harness'

const PUBLIC_URL = 'https://credentials.example.com'

describe.each(testDatabases())(
  'issue 11: logs of an issuance and a presentation on $name',
  (testDatabase) => {
    const lines: string[] = []
    let started: AllInOne
    beforeAll(async () => {
      started = await startAllInOne(testDatabase, PUBLIC_URL, {}, undefined, lines)
    })
    afterAll(() => started.app.close())

    it("issue 11: no offer id, request id, pre-authorized code, token or secret reaches a log line, even at trace; the session id only as the flow lines' sessionId (issue 42 item 4)", async () => {
      const { app } = started
      const root = await bearer(app, started.rootClientId, started.rootSecret)
      const tenant = `logs-${crypto.randomUUID().slice(0, 8)}`
      const post = (url: string, payload: object, headers: Record<string, string>) =>
        app.inject({ method: 'POST', url, headers, payload })
      expect((await post('/api/tenants', { id: tenant, name: tenant }, root)).statusCode).toBe(201)
      const client = (
        await post(
          `/api/tenants/${tenant}/clients`,
          {
            roles: [
              'key:manage',
              'issuance:config',
              'issuance:offer',
              'presentation:config',
              'presentation:request',
            ],
          },
          root,
        )
      ).json()
      const admin = await bearer(app, client.clientId, client.clientSecret)
      const keys = await post(
        '/api/key-chains',
        { source: 'generate', id: 'keys', certificate: { subject: 'CN=Log Test,C=DE' } },
        admin,
      )
      expect(keys.statusCode, keys.body).toBe(201)
      const credential = await post(
        '/api/credentials',
        {
          id: 'pid',
          config: { format: 'dc+sd-jwt', vct: 'urn:eudi:pid:1' },
          keyChainId: 'keys',
          fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
        },
        admin,
      )
      expect(credential.statusCode, credential.body).toBe(201)
      const presentation = await post(
        '/api/presentations',
        {
          id: 'age',
          keyChainId: 'keys',
          dcqlQuery: {
            credentials: [
              {
                id: 'pid',
                format: 'dc+sd-jwt',
                meta: { vct_values: ['urn:eudi:pid:1'] },
                claims: [{ path: ['given_name'] }],
              },
            ],
          },
        },
        admin,
      )
      expect(presentation.statusCode, presentation.body).toBe(201)

      // Issuance: an offer by reference, fetched with a token in the query, polled, redeemed.
      const offer = await post(
        '/api/offers',
        { credentialConfigurationIds: ['pid'], claims: { pid: { given_name: 'Erika' } } },
        admin,
      )
      expect(offer.statusCode, offer.body).toBe(201)
      const { sessionId, credentialOfferUri, credentialOffer } = offer.json()
      const offerPath = new URL(credentialOfferUri).pathname
      const preAuthorizedCode = credentialOffer.grants[
        'urn:ietf:params:oauth:grant-type:pre-authorized_code'
      ]['pre-authorized_code'] as string
      const queryToken = `query-token-${crypto.randomUUID()}`
      expect((await app.inject({ url: `${offerPath}?access_token=${queryToken}` })).statusCode).toBe(200)
      expect((await app.inject({ url: `/api/sessions/${sessionId}`, headers: admin })).statusCode).toBe(200)
      expect(
        (await app.inject({ url: `/api/tenants/${tenant}/sessions/${sessionId}`, headers: admin }))
          .statusCode,
      ).toBe(200)
      const token = await app.inject({
        method: 'POST',
        url: `/issuers/${tenant}/token`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
          'pre-authorized_code': preAuthorizedCode,
        }).toString(),
      })
      expect(token.statusCode, token.body).toBe(200)
      const accessToken = token.json().access_token as string
      // A wallet that puts the code in the query string: the value stays out of the logs too.
      await app.inject({
        method: 'POST',
        url: `/issuers/${tenant}/token?pre-authorized_code=${preAuthorizedCode}`,
      })
      // A second redemption fails: its error is logged, without the code.
      await app.inject({
        method: 'POST',
        url: `/issuers/${tenant}/token`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Apre-authorized_code&pre-authorized_code=${preAuthorizedCode}`,
      })

      // Presentation: the request object by reference, then a bad wallet response.
      const request = await post('/api/presentation-requests', { presentationConfigId: 'age' }, admin)
      expect(request.statusCode, request.body).toBe(201)
      const requestPath = new URL(request.json().requestUri).pathname
      const requestId = requestPath.split('/').at(-1) as string
      expect((await app.inject({ url: requestPath })).statusCode).toBe(200)
      const response = await app.inject({
        method: 'POST',
        url: `/verifiers/${tenant}/responses/${requestId}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'response=not-a-jwe',
      })
      expect(response.statusCode).toBe(400)

      const urls = lines
        .map((line) => JSON.parse(line) as { msg: string; req?: { url: string } })
        .filter((line) => line.msg === 'incoming request')
        .map((line) => line.req?.url)
      expect(urls).toContain(`/issuers/${tenant}/offers/[redacted]?access_token=[redacted]`)
      expect(urls).toContain(`/verifiers/${tenant}/requests/[redacted]`)
      expect(urls).toContain(`/verifiers/${tenant}/responses/[redacted]`)
      // Issue 42 item 4: the flow lines name the session for correlation (in their `sessionId` field
      // only: it opens nothing without a token); URLs and every other field still hide it.
      const parsed = lines
        .filter((line) => line.trim())
        .map((line) => JSON.parse(line) as Record<string, unknown>)
      const naming = parsed.filter((line) => JSON.stringify(line).includes(sessionId))
      expect(naming.length).toBeGreaterThan(0)
      for (const line of naming) {
        expect(line.sessionId).toBe(sessionId)
        expect(JSON.stringify({ ...line, sessionId: undefined })).not.toContain(sessionId)
      }
      const text = parsed.map((line) => JSON.stringify({ ...line, sessionId: undefined })).join('\n')
      for (const secret of [
        started.rootSecret,
        client.clientSecret,
        root.authorization.slice('Bearer '.length),
        admin.authorization.slice('Bearer '.length),
        sessionId,
        preAuthorizedCode,
        queryToken,
        accessToken,
        requestId,
      ]) {
        expect(text).not.toContain(secret)
      }
    })
  },
)
