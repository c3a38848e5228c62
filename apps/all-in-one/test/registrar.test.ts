import { X509Certificate } from 'node:crypto'
import { generateKeyPair } from '@credential-service/crypto'
import { schema } from '@credential-service/db-schema'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { testDatabases } from '@credential-service/db-schema/testing'
import { eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { compactVerify, decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, startAllInOne } from './harness'
import { type RegistrarStandIn, startRegistrarStandIn } from './registrar-standin'

const PUBLIC_URL = 'https://verifier.example.com'
const SECRET = `registrar-secret-${crypto.randomUUID()}`
const dcql = {
  credentials: [
    {
      id: 'pid',
      format: 'dc+sd-jwt',
      meta: { vct_values: ['urn:eudi:pid:1'] },
      claims: [{ path: ['given_name'] }, { path: ['family_name'] }],
    },
  ],
}
const der = (pem: string) => new X509Certificate(pem).raw.toString('base64')

describe.each(testDatabases())('registrar integration on $name', (testDatabase) => {
  let app: FastifyInstance
  let database: DatabaseHandle
  let registrar: RegistrarStandIn
  let root: Record<string, string>
  let admin: Record<string, string>
  let otherAdmin: Record<string, string>
  let withoutRole: Record<string, string>
  const tenant = `rp-${crypto.randomUUID().slice(0, 8)}`
  const other = `rp-${crypto.randomUUID().slice(0, 8)}`

  const call = (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, headers = admin, payload?: unknown) =>
    app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) })
  const configInput = () => ({
    baseUrl: registrar.baseUrl,
    tokenUrl: registrar.tokenUrl,
    clientId: 'rp-client',
    clientSecret: SECRET,
  })
  const keyChain = async () => (await call('GET', '/api/key-chains/rp-keys')).json()
  async function fetchRequestObject() {
    const created = await call('POST', '/api/presentation-requests', admin, { presentationConfigId: 'pid' })
    expect(created.statusCode, created.body).toBe(201)
    const response = await app.inject({ url: new URL(created.json().requestUri).pathname })
    expect(response.statusCode, response.body).toBe(200)
    const header = decodeProtectedHeader(response.body)
    const leaf = new X509Certificate(Buffer.from((header.x5c as string[])[0] as string, 'base64'))
    const { payload } = await compactVerify(response.body, leaf.publicKey)
    return {
      created: created.json(),
      header,
      claims: JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>,
    }
  }

  /** The signed request object of a Digital Credentials API request (OpenID4VP 1.0 A.3.2), verified. */
  async function signedDcApiRequest() {
    const created = await call('POST', '/api/presentation-requests', admin, {
      presentationConfigId: 'pid',
      transport: 'dc-api',
      origin: 'https://shop.example.com',
    })
    expect(created.statusCode, created.body).toBe(201)
    const signed = created
      .json()
      .dcApi.requests.find((entry: { protocol: string }) => entry.protocol === 'openid4vp-v1-signed')
    const jws = signed.data.request as string
    const leaf = new X509Certificate(
      Buffer.from((decodeProtectedHeader(jws).x5c as string[])[0] as string, 'base64'),
    )
    const { payload } = await compactVerify(jws, leaf.publicKey)
    return JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>
  }

  beforeAll(async () => {
    registrar = await startRegistrarStandIn({ id: 'rp-client', secret: SECRET })
    // Seeded over HTTP on purpose (no world): the registrar API is what these tests drive.
    const started = await startAllInOne(testDatabase, PUBLIC_URL, {
      // The stand-in listens on plain http on loopback: the test policy allows exactly that.
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    })
    app = started.app
    database = started.database
    await app.ready()
    root = await bearer(app, started.rootClientId, started.rootSecret)
    const client = async (tenantId: string, roles: string[]) => {
      const created = (await call('POST', `/api/tenants/${tenantId}/clients`, root, { roles })).json()
      return bearer(app, created.clientId, created.clientSecret)
    }
    for (const id of [tenant, other]) await call('POST', '/api/tenants', root, { id, name: id })
    const roles = ['key:manage', 'presentation:config', 'presentation:request', 'registrar:manage']
    admin = await client(tenant, roles)
    otherAdmin = await client(other, roles)
    withoutRole = await client(tenant, roles.slice(0, 3))
    expect(
      (
        await call('POST', '/api/key-chains', admin, {
          source: 'generate',
          id: 'rp-keys',
          certificate: { subject: 'CN=Example Verifier,C=DE' },
        })
      ).statusCode,
    ).toBe(201)
    expect(
      (await call('POST', '/api/presentations', admin, { id: 'pid', dcqlQuery: dcql, keyChainId: 'rp-keys' }))
        .statusCode,
    ).toBe(201)
  })
  afterAll(async () => {
    await app?.close()
    await registrar?.close()
  })

  describe('happy', () => {
    it('configures the registrar; the client secret is encrypted at rest and never returned', async () => {
      expect((await call('GET', '/api/registrar')).statusCode).toBe(404)
      const put = await call('PUT', '/api/registrar', admin, configInput())
      expect(put.statusCode, put.body).toBe(200)
      expect(put.json()).toStrictEqual({
        baseUrl: registrar.baseUrl,
        tokenUrl: registrar.tokenUrl,
        clientId: 'rp-client',
        relyingParty: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      })
      const viaTenantPath = await call('GET', `/api/tenants/${tenant}/registrar`)
      expect(viaTenantPath.json()).toStrictEqual(put.json())
      expect(viaTenantPath.body).not.toContain(SECRET)
      const [row] = await database.db
        .select()
        .from(schema.registrarConfigs)
        .where(eq(schema.registrarConfigs.tenantId, tenant))
      expect(row?.clientSecret).toMatch(/^v1\./)
      expect(row?.clientSecret).not.toContain(SECRET)
    })

    it('registers the tenant as relying party with client credentials and a bearer token', async () => {
      const response = await call('POST', '/api/registrar/relying-party', admin, {
        name: 'Example Verifier GmbH',
        roles: ['verifier', 'issuer'],
        identifiers: { LEI: '5299001GCLKH6FDKIJ47' },
      })
      expect(response.statusCode, response.body).toBe(200)
      const [id] = [...registrar.relyingParties.keys()]
      expect(response.json().relyingParty).toStrictEqual({
        id,
        name: 'Example Verifier GmbH',
        roles: ['verifier', 'issuer'],
        registeredAt: expect.any(String),
      })
      expect(registrar.relyingParties.get(id as string)).toStrictEqual({
        name: 'Example Verifier GmbH',
        roles: ['verifier', 'issuer'],
      })
      const [tokenCall, registerCall] = registrar.calls.slice(-2)
      expect(tokenCall?.path).toBe('/oauth2/token')
      expect(tokenCall?.body).toBe('grant_type=client_credentials')
      expect(tokenCall?.headers.authorization).toBe(
        `Basic ${Buffer.from(`rp-client:${SECRET}`).toString('base64')}`,
      )
      expect(registerCall?.path).toBe('/api/relying-parties')
      expect(registerCall?.headers.authorization).toMatch(/^Bearer /)
      // Registered once: a second registration is a conflict, not a second relying party.
      expect((await call('POST', '/api/registrar/relying-party', admin, { name: 'again' })).statusCode).toBe(
        409,
      )
      expect(registrar.relyingParties.size).toBe(1)
      // A PUT with the same registrar and no secret keeps both the secret and the registration.
      const { clientSecret: _, ...withoutSecret } = configInput()
      const kept = await call('PUT', '/api/registrar', admin, withoutSecret)
      expect(kept.statusCode, kept.body).toBe(200)
      expect(kept.json().relyingParty.id).toBe(id)
    })

    it('OpenID4VP §5.9.3, HAIP 5 (V-05): the access certificate lands on the key chain and signs request objects in x5c', async () => {
      const before = await keyChain()
      const response = await call('POST', '/api/registrar/access-certificates', admin, {
        keyChainId: 'rp-keys',
      })
      expect(response.statusCode, response.body).toBe(201)
      const issued = response.json()
      const sent = JSON.parse(registrar.calls.at(-1)?.body as string)
      expect(sent).toStrictEqual({
        rpId: [...registrar.relyingParties.keys()][0],
        publicKey: expect.stringContaining('-----BEGIN PUBLIC KEY-----'),
        dns: ['verifier.example.com'],
      })
      // The registrar's root stays out: leaf and access CA only.
      expect(issued.certificateChain).toHaveLength(2)
      expect(der(issued.certificateChain[1])).toBe(der(registrar.accessCa))
      const leaf = new X509Certificate(issued.certificateChain[0])
      expect(leaf.checkIssued(new X509Certificate(registrar.accessCa))).toBe(true)
      expect(leaf.verify(new X509Certificate(registrar.accessCa).publicKey)).toBe(true)

      const after = await keyChain()
      expect(after.certificateMode).toBe('registrar')
      expect(after.activeKey.kid).toBe(before.activeKey.kid)
      expect(after.activeKey.certificateChain).toStrictEqual(issued.certificateChain)

      const { created, header, claims } = await fetchRequestObject()
      expect(header.x5c).toStrictEqual([leaf.raw.toString('base64'), der(registrar.accessCa)])
      expect(created.clientId).toBe('x509_san_dns:verifier.example.com')
      expect(claims.client_id).toBe(created.clientId)
      expect(claims.verifier_info).toBeUndefined()
    })

    it('OpenID4VP 1.0 §5.1, A.3.2: the registration certificate travels as verifier_info, in request objects and signed DC API requests, while the DCQL query is the registered one', async () => {
      const response = await call('POST', '/api/registrar/registration-certificates', admin, {
        presentationConfigId: 'pid',
        purpose: [{ lang: 'en', content: 'Age check at the counter' }],
        privacyPolicyUri: 'https://verifier.example.com/privacy',
        supportUri: 'mailto:support@verifier.example.com',
      })
      expect(response.statusCode, response.body).toBe(201)
      const certificate = response.json()
      expect(JSON.parse(registrar.calls.at(-1)?.body as string)).toStrictEqual({
        rpId: [...registrar.relyingParties.keys()][0],
        privacy_policy: 'https://verifier.example.com/privacy',
        support_uri: 'mailto:support@verifier.example.com',
        purpose: [{ lang: 'en', content: 'Age check at the counter' }],
        credentials: [
          {
            format: 'dc+sd-jwt',
            meta: { vct_values: ['urn:eudi:pid:1'] },
            claims: [{ path: ['given_name'] }, { path: ['family_name'] }],
          },
        ],
      })
      expect(certificate).toStrictEqual({
        presentationConfigId: 'pid',
        registrarCertificateId: expect.any(String),
        jwt: expect.any(String),
        expiresAt: new Date((decodeJwt(certificate.jwt).exp as number) * 1000).toISOString(),
        createdAt: expect.any(String),
      })

      const { claims } = await fetchRequestObject()
      expect(claims.verifier_info).toStrictEqual([{ format: 'registration_cert', data: certificate.jwt }])
      // Issue 37: EU wallets read the registration certificate in signed Digital Credentials API
      // requests too: "verifier_info: OPTIONAL. An array of attestations about the Verifier
      // relevant to the Credential Request" (§5.1), a parameter of the request object A.3.2 signs.
      const dcApi = await signedDcApiRequest()
      expect(dcApi.expected_origins).toStrictEqual(['https://shop.example.com'])
      expect(dcApi.verifier_info).toStrictEqual([{ format: 'registration_cert', data: certificate.jwt }])

      // Another DCQL query is not what the registrar certified: the certificate is left out.
      const changed = {
        credentials: [{ ...dcql.credentials[0], claims: [{ path: ['birthdate'] }] }],
      }
      const put = await call('PUT', '/api/presentations/pid', admin, {
        id: 'pid',
        dcqlQuery: changed,
        keyChainId: 'rp-keys',
      })
      expect(put.statusCode, put.body).toBe(200)
      expect((await fetchRequestObject()).claims.verifier_info).toBeUndefined()
      expect((await signedDcApiRequest()).verifier_info).toBeUndefined()
      const restored = await call('PUT', '/api/presentations/pid', admin, {
        id: 'pid',
        dcqlQuery: dcql,
        keyChainId: 'rp-keys',
      })
      expect(restored.statusCode).toBe(200)
      expect((await fetchRequestObject()).claims.verifier_info).toStrictEqual([
        { format: 'registration_cert', data: certificate.jwt },
      ])
    })
  })

  describe('error', () => {
    it('S-125: registrar failures are 502 problems and store nothing', async () => {
      const before = await keyChain()
      const expectNothingStored = async () =>
        expect((await keyChain()).activeKey.certificateChain).toStrictEqual(before.activeKey.certificateChain)

      registrar.fail('/api/access-certificates', 503)
      const unavailable = await call('POST', '/api/registrar/access-certificates', admin, {
        keyChainId: 'rp-keys',
      })
      expect(unavailable.statusCode).toBe(502)
      expect(unavailable.headers['content-type']).toContain('application/problem+json')
      expect(unavailable.json()).toMatchObject({
        code: 'upstream_failure',
        detail: 'access certificate request: the registrar answered HTTP 503',
      })
      await expectNothingStored()

      // A certificate for another key must never sign this key chain's requests.
      registrar.certifyWrongKey((await generateKeyPair('ES256')).publicJwk)
      const wrongKey = await call('POST', '/api/registrar/access-certificates', admin, {
        keyChainId: 'rp-keys',
      })
      registrar.certifyWrongKey(undefined)
      expect(wrongKey.statusCode).toBe(502)
      expect(wrongKey.json().detail).toBe(
        "access certificate request: the registrar's certificate is unusable for key chain 'rp-keys': certificate 0 does not certify the key chain’s public key",
      )
      await expectNothingStored()

      registrar.fail('/api/registration-certificates', 500)
      const failed = await call('POST', '/api/registrar/registration-certificates', admin, {
        presentationConfigId: 'pid',
        purpose: [{ lang: 'en', content: 'x' }],
        privacyPolicyUri: 'https://verifier.example.com/privacy',
        supportUri: 'https://verifier.example.com/support',
      })
      expect(failed.statusCode).toBe(502)
      const { claims } = await fetchRequestObject()
      expect((claims.verifier_info as { data: string }[])[0]?.data).not.toBeUndefined()

      // The token endpoint refuses a wrong secret: 502 naming it, and the registration stays.
      expect(
        (await call('PUT', '/api/registrar', admin, { ...configInput(), clientSecret: 'wrong' })).statusCode,
      ).toBe(200)
      const refused = await call('POST', '/api/registrar/access-certificates', admin, {
        keyChainId: 'rp-keys',
      })
      expect(refused.statusCode).toBe(502)
      expect(refused.json().detail).toBe(
        'registrar token endpoint refused the client credentials (HTTP 401); check clientId and clientSecret',
      )
      await expectNothingStored()
      expect((await call('PUT', '/api/registrar', admin, configInput())).statusCode).toBe(200)
    })

    it('refuses bad input: no secret on first PUT, disallowed URLs (S-120), unknown key chain, unregistered tenant', async () => {
      const { clientSecret: _, ...withoutSecret } = configInput()
      const first = await call('PUT', '/api/registrar', otherAdmin, withoutSecret)
      expect(first.statusCode).toBe(422)
      expect(first.json().errors).toStrictEqual([
        { path: 'body.clientSecret', message: 'required when the tenant has no registrar configuration yet' },
      ])
      const internal = await call('PUT', '/api/registrar', otherAdmin, {
        ...configInput(),
        baseUrl: 'http://169.254.169.254/latest',
      })
      expect(internal.statusCode).toBe(422)
      expect(internal.json().errors[0].path).toBe('body.baseUrl')

      expect((await call('PUT', '/api/registrar', otherAdmin, configInput())).statusCode).toBe(200)
      const unregistered = await call('POST', '/api/registrar/access-certificates', otherAdmin, {
        keyChainId: 'rp-keys',
      })
      expect(unregistered.statusCode).toBe(422)
      expect(unregistered.json().code).toBe('rule_violation')

      const unknownChain = await call('POST', '/api/registrar/access-certificates', admin, {
        keyChainId: 'nope',
      })
      expect(unknownChain.statusCode).toBe(422)
      expect(unknownChain.json().errors).toStrictEqual([
        { path: 'body.keyChainId', message: "no key chain 'nope' in this tenant" },
      ])
      const unknownConfig = await call('POST', '/api/registrar/registration-certificates', admin, {
        presentationConfigId: 'nope',
        purpose: [{ lang: 'en', content: 'x' }],
        privacyPolicyUri: 'https://verifier.example.com/privacy',
        supportUri: 'https://verifier.example.com/support',
      })
      expect(unknownConfig.statusCode).toBe(422)
      expect((await call('PUT', '/api/registrar', admin, { ...configInput(), extra: 1 })).statusCode).toBe(
        400,
      )
    })
  })

  describe('security', () => {
    it('another tenant neither sees nor uses the configuration (404)', async () => {
      for (const [method, suffix, payload] of [
        ['GET', '', undefined],
        ['PUT', '', configInput()],
        ['DELETE', '', undefined],
        ['POST', '/relying-party', { name: 'x' }],
        ['POST', '/access-certificates', { keyChainId: 'rp-keys' }],
      ] as const) {
        const response = await call(method, `/api/tenants/${tenant}/registrar${suffix}`, otherAdmin, payload)
        expect(response.statusCode, `${method} ${suffix}`).toBe(404)
      }
      // The other tenant's own configuration is its own.
      expect((await call('GET', '/api/registrar', otherAdmin)).json().relyingParty).toBeNull()
      expect((await call('GET', '/api/registrar')).json().relyingParty).not.toBeNull()
    })

    it('spec §5 rule 4: every registrar operation needs registrar:manage', async () => {
      for (const [method, suffix] of [
        ['GET', ''],
        ['PUT', ''],
        ['DELETE', ''],
        ['POST', '/relying-party'],
        ['POST', '/access-certificates'],
        ['POST', '/registration-certificates'],
      ] as const) {
        const response = await call(
          method,
          `/api/registrar${suffix}`,
          withoutRole,
          method === 'GET' ? undefined : {},
        )
        expect(response.statusCode, `${method} ${suffix}`).toBe(403)
      }
    })

    it('deleting the configuration keeps the stored certificates', async () => {
      expect((await call('DELETE', '/api/registrar')).statusCode).toBe(204)
      expect((await call('GET', '/api/registrar')).statusCode).toBe(404)
      expect((await call('DELETE', '/api/registrar')).statusCode).toBe(404)
      expect((await keyChain()).certificateMode).toBe('registrar')
      expect((await fetchRequestObject()).claims.verifier_info).toHaveLength(1)
    })
  })
})
