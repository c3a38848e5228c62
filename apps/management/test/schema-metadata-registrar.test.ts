import { testDatabases } from '@credential-service/db-schema/testing'
import { decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RegistrarStandIn, startRegistrarStandIn } from '../../all-in-one/test/registrar-standin'
import { createHarness, type Harness, random, seedTenants, type TestClient } from './harness'

// Issue 23 item 8: the peer product's (EUDIPLO) TS11 form of POST …/schema-metadata/sign with
// `submitToRegistrar` reserves an attestation id at the tenant's registrar, signs it in and submits
// the JWS (docs/schema-metadata.md, docs/registrar.md "Wire protocol"), against the registrar
// stand-in of the all-in-one suites. Signing without submission: schema-metadata-ts11.test.ts.

const SECRET = `registrar-secret-${crypto.randomUUID()}`

const ts11 = (extra: Record<string, unknown> = {}) => ({
  version: '1.0.0',
  rulebookURI: 'https://rulebooks.example.com/pid/1.0.0.md',
  attestationLoS: 'iso_18045_high',
  bindingType: 'key',
  schemaURIs: [{ uri: 'https://schemas.example.com/pid.json' }],
  ...extra,
})

describe.each(testDatabases())('TS11 schema metadata submitted to the registrar on $name', (testDatabase) => {
  let h: Harness
  let registrar: RegistrarStandIn
  let admin: TestClient
  let sdJwt: string

  const post = (url: string, payload: unknown, client = admin) =>
    h.app.inject({ method: 'POST', url, headers: client.auth, payload: payload as object })
  const sign = (payload: unknown, client = admin) => post('/api/schema-metadata/sign', payload, client)
  /** The registrar calls (paths) made by `action`. */
  const callsOf = async <T>(action: () => Promise<T>): Promise<[T, string[]]> => {
    const before = registrar.calls.length
    const result = await action()
    return [result, registrar.calls.slice(before).map((call) => call.path)]
  }

  beforeAll(async () => {
    registrar = await startRegistrarStandIn({ id: 'rp-client', secret: SECRET })
    // The stand-in listens on plain http on loopback: the test policy allows exactly that.
    h = await createHarness(testDatabase, {
      env: { OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' },
    })
    admin = await h.createClient(h.tenantA, ['issuance:config', 'key:manage', 'registrar:manage'])
    const keyChainId = (
      await post('/api/key-chains', { source: 'generate', certificate: { country: 'DE' } })
    ).json().id
    sdJwt = random('pid')
    const created = await post('/api/credentials', {
      id: sdJwt,
      config: { format: 'dc+sd-jwt', vct: 'urn:eudi:pid:de:1' },
      fields: [{ path: ['given_name'], type: 'string' }],
      keyChainId,
    })
    expect(created.statusCode, created.body).toBe(201)
    const connected = await h.app.inject({
      method: 'PUT',
      url: '/api/registrar',
      headers: admin.auth,
      payload: {
        baseUrl: registrar.baseUrl,
        tokenUrl: registrar.tokenUrl,
        clientId: 'rp-client',
        clientSecret: SECRET,
      },
    })
    expect(connected.statusCode, connected.body).toBe(200)
  })
  afterAll(async () => {
    await h?.close()
    await registrar?.close()
  })

  describe('happy', () => {
    it('reserves an id, signs it in, submits the JWS with the reservation token: the registrar holds exactly the answered JWS under the reserved id', async () => {
      const [response, paths] = await callsOf(() =>
        sign({ config: ts11(), credentialConfigId: sdJwt, submitToRegistrar: true }),
      )
      expect(response.statusCode, response.body).toBe(200)
      expect(paths).toStrictEqual(['/oauth2/token', '/api/schema-metadata/reserve', '/api/schema-metadata'])
      const answer = response.json()
      const entry = registrar.schemaMetadata.at(-1)
      expect(answer.registrar).toStrictEqual({ id: entry?.id, reserved: true, entryId: entry?.entryId })
      expect(entry?.id.startsWith(`${registrar.baseUrl}/schema-metadata/`)).toBe(true)
      expect(entry?.jwt).toBe(answer.jws)
      expect(answer.schemaMeta).toMatchObject({ id: entry?.id, version: '1.0.0' })
      expect(decodeProtectedHeader(answer.jws).typ).toBe('attestation-schema+jwt')
      // The reservation was used up by this submission, with its token and the JWS as the body.
      expect(registrar.reservations.has(entry?.id as string)).toBe(false)
      const submit = registrar.calls.at(-1)
      expect(JSON.parse(submit?.body as string)).toStrictEqual({ jwt: answer.jws })
      expect(submit?.headers['x-reservation-token']).toStrictEqual(expect.any(String))
    })

    it('with config.id (a new version of an entry) nothing is reserved and no reservation token is sent', async () => {
      const first = await sign({ config: ts11(), credentialConfigId: sdJwt, submitToRegistrar: true })
      const id = first.json().registrar.id
      const [response, paths] = await callsOf(() =>
        sign({ config: ts11({ id, version: '1.1.0' }), credentialConfigId: sdJwt, submitToRegistrar: true }),
      )
      expect(response.statusCode, response.body).toBe(200)
      expect(paths).toStrictEqual(['/oauth2/token', '/api/schema-metadata'])
      const entry = registrar.schemaMetadata.at(-1)
      expect(response.json().registrar).toStrictEqual({ id, reserved: false, entryId: entry?.entryId })
      expect(entry).toMatchObject({ id, version: '1.1.0', jwt: response.json().jws })
      expect(registrar.calls.at(-1)?.headers['x-reservation-token']).toBeUndefined()
    })

    it('without submitToRegistrar (or with false) the registrar sees no call and the answer has no registrar member', async () => {
      for (const body of [
        { config: ts11(), credentialConfigId: sdJwt },
        { config: ts11(), credentialConfigId: sdJwt, submitToRegistrar: false },
      ]) {
        const [response, paths] = await callsOf(() => sign(body))
        expect(response.statusCode, response.body).toBe(200)
        expect(paths).toStrictEqual([])
        expect(response.json()).not.toHaveProperty('registrar')
        expect(response.json().schemaMeta).not.toHaveProperty('id')
      }
    })
  })

  describe('error', () => {
    it('submitting needs registrar:manage besides issuance:config (it publishes under the tenant’s registration): 403, nothing called', async () => {
      const signer = await h.createClient(h.tenantA, ['issuance:config'])
      const [refused, paths] = await callsOf(() =>
        sign({ config: ts11(), credentialConfigId: sdJwt, submitToRegistrar: true }, signer),
      )
      expect(refused.statusCode, refused.body).toBe(403)
      expect(refused.json().detail).toMatch(/registrar:manage/)
      expect(paths).toStrictEqual([])
      // Signing alone stays issuance:config's.
      expect((await sign({ config: ts11(), credentialConfigId: sdJwt }, signer)).statusCode).toBe(200)
    })

    it('a tenant without a registrar connection (another tenant has one) gets a 422 naming body.submitToRegistrar; nothing is called', async () => {
      const tenant = random('noreg')
      await seedTenants(h.app, h.root.auth, [tenant])
      const client = await h.createClient(tenant, ['issuance:config', 'key:manage', 'registrar:manage'])
      const keyChainId = (await post('/api/key-chains', { source: 'generate' }, client)).json().id
      const [response, paths] = await callsOf(() =>
        sign({ config: ts11({ schemaURIs: undefined }), keyChainId, submitToRegistrar: true }, client),
      )
      expect(response.statusCode).toBe(422)
      expect(response.json()).toMatchObject({ code: 'rule_violation', status: 422 })
      expect(response.json().errors).toStrictEqual([
        {
          path: 'body.submitToRegistrar',
          message:
            'the tenant has no registrar connection: PUT /api/registrar first, or leave submitToRegistrar out',
        },
      ])
      expect(paths).toStrictEqual([])
    })

    it('the registrar refusing the submission is a 502 naming the step and the unused reservation; nothing is recorded', async () => {
      const recorded = registrar.schemaMetadata.length
      const reserved = registrar.reservations.size
      registrar.fail('/api/schema-metadata', 409)
      const [response, paths] = await callsOf(() =>
        sign({ config: ts11(), credentialConfigId: sdJwt, submitToRegistrar: true }),
      )
      expect(response.statusCode).toBe(502)
      const problem = response.json()
      expect(problem.code).toBe('upstream_failure')
      expect(problem.detail).toMatch(/^schema metadata submission: the registrar answered HTTP 409: /)
      expect(problem.detail).toContain('did not confirm the submission')
      expect(problem.detail).toContain('reserved for it stays unused')
      expect(paths).toStrictEqual(['/oauth2/token', '/api/schema-metadata/reserve', '/api/schema-metadata'])
      expect(registrar.schemaMetadata).toHaveLength(recorded)
      expect(registrar.reservations.size).toBe(reserved + 1)
    })

    it('the registrar refusing the reservation is a 502 naming that step; nothing is signed or submitted', async () => {
      registrar.fail('/api/schema-metadata/reserve', 500)
      const [response, paths] = await callsOf(() =>
        sign({ config: ts11(), credentialConfigId: sdJwt, submitToRegistrar: true }),
      )
      expect(response.statusCode).toBe(502)
      expect(response.json().detail).toBe('schema metadata id reservation: the registrar answered HTTP 500')
      expect(paths).toStrictEqual(['/oauth2/token', '/api/schema-metadata/reserve'])
    })

    it('a document that cannot be signed reserves nothing; submitToRegistrar outside the TS11 form is a 400 naming it', async () => {
      const [incomplete, paths] = await callsOf(() =>
        sign({
          config: ts11({ trustedAuthorities: [{ trustListId: 'tl-1' }] }),
          credentialConfigId: sdJwt,
          submitToRegistrar: true,
        }),
      )
      expect(incomplete.statusCode).toBe(422)
      expect(paths).toStrictEqual([])

      const ours = await sign({ credentialConfigId: sdJwt, submitToRegistrar: true })
      expect(ours.statusCode).toBe(400)
      expect(ours.json().errors).toStrictEqual([
        {
          path: 'body.submitToRegistrar',
          message: 'submission to the registrar is for the TS11 form (`config`) only',
        },
      ])
      const version = await post('/api/schema-metadata/sign-version', {
        credentialConfigId: sdJwt,
        version: '1.0.0',
        submitToRegistrar: true,
      })
      expect(version.statusCode).toBe(400)
    })
  })

  describe('security', () => {
    it('the stand-in is strict: a wrong reservation token is a 403, a tampered document a 401, no bearer token a 401', async () => {
      const basic = Buffer.from(`rp-client:${SECRET}`).toString('base64')
      const { access_token } = (await (
        await fetch(registrar.tokenUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
          body: 'grant_type=client_credentials',
        })
      ).json()) as { access_token: string }
      const call = (path: string, body: object, headers: Record<string, string> = {}) =>
        fetch(`${registrar.baseUrl}${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${access_token}`,
            ...headers,
          },
          body: JSON.stringify(body),
        })
      const { reservedId, reservationToken } = (await (
        await call('/schema-metadata/reserve', {})
      ).json()) as {
        reservedId: string
        reservationToken: string
      }
      const { jws } = (await sign({ config: ts11({ id: reservedId }), credentialConfigId: sdJwt })).json()
      const [header, , signature] = jws.split('.')
      const tampered = `${header}.${Buffer.from(JSON.stringify({ id: reservedId, version: '9.9.9' })).toString('base64url')}.${signature}`
      const statuses = [
        (await call('/schema-metadata', { jwt: jws }, { 'x-reservation-token': 'guess' })).status,
        (await call('/schema-metadata', { jwt: tampered }, { 'x-reservation-token': reservationToken }))
          .status,
        (await call('/schema-metadata', { jwt: jws }, { authorization: 'Bearer guess' })).status,
        (await call('/schema-metadata', { jwt: jws }, { 'x-reservation-token': reservationToken })).status,
      ]
      expect(statuses).toStrictEqual([403, 401, 401, 201])
    })

    it("neither the registrar's reservation token nor the client secret is answered", async () => {
      const response = await sign({ config: ts11(), credentialConfigId: sdJwt, submitToRegistrar: true })
      expect(response.statusCode).toBe(200)
      const token = registrar.calls.at(-1)?.headers['x-reservation-token'] as string
      expect(response.body).not.toContain(token)
      expect(response.body).not.toContain(SECRET)
    })
  })
})
