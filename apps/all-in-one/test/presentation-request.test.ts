import { createHash, X509Certificate } from 'node:crypto'
import { schema } from '@credential-service/db-schema'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { testDatabases } from '@credential-service/db-schema/testing'
import { count, eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { calculateJwkThumbprint, compactVerify, decodeProtectedHeader, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, startAllInOneWorld } from './harness'

const PUBLIC_URL = 'https://verifier.example.com'
const dcql = {
  credentials: [
    {
      id: 'pid',
      format: 'dc+sd-jwt',
      meta: { vct_values: ['urn:eudi:pid:1'] },
      claims: [{ path: ['given_name'] }],
    },
  ],
}

describe.each(testDatabases())('OpenID4VP presentation requests on $name', (testDatabase) => {
  let app: FastifyInstance
  let database: DatabaseHandle
  let admin: Record<string, string>
  let tenant: string
  /** Tenant a's client that may ask in `age-hash` only (test/worlds/presentation-request). */
  let restricted: Record<string, string>

  const post = (url: string, payload: unknown, headers = admin) =>
    app.inject({ method: 'POST', url, headers, payload: payload as object })

  beforeAll(async () => {
    // The `presentation-request` world (test/worlds/presentation-request): tenant a asks in `age`
    // and `age-hash` (x509_hash), signed by `rp-keys`; tenant b has a webhook endpoint `results`.
    const started = await startAllInOneWorld(testDatabase, 'presentation-request', PUBLIC_URL)
    app = started.app
    database = started.database
    await app.ready()
    tenant = started.tenants.a.id
    admin = started.tenants.a.auth
    const client = started.tenants.a.clients.restricted as { clientId: string; clientSecret: string }
    restricted = await bearer(app, client.clientId, client.clientSecret)
  })
  afterAll(() => app.close())

  async function fetchRequest(requestUri: string, walletNonce?: string) {
    const url = new URL(requestUri).pathname
    const response = walletNonce
      ? await app.inject({
          method: 'POST',
          url,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: `wallet_nonce=${walletNonce}`,
        })
      : await app.inject({ url })
    expect(response.statusCode, response.body).toBe(200)
    expect(response.headers['content-type']).toContain('application/oauth-authz-req+jwt')
    const header = decodeProtectedHeader(response.body)
    const leaf = new X509Certificate(Buffer.from((header.x5c as string[])[0] as string, 'base64'))
    const { payload } = await compactVerify(response.body, leaf.publicKey)
    return {
      header,
      leaf,
      jwt: response.body,
      // biome-ignore lint/suspicious/noExplicitAny: request object claims are read loosely in tests
      claims: JSON.parse(new TextDecoder().decode(payload)) as Record<string, any>,
    }
  }

  it('OpenID4VP §5 (V-01..V-04, V-06, V-09): a signed request object by reference with x509_san_dns', async () => {
    const created = await post('/api/presentation-requests', { presentationConfigId: 'age' })
    expect(created.statusCode, created.body).toBe(201)
    const body = created.json()
    expect(body.clientId).toBe('x509_san_dns:verifier.example.com')
    const uri = new URL(body.authorizationRequestUri)
    expect(uri.protocol).toBe('openid4vp:')
    expect(Object.fromEntries(uri.searchParams)).toStrictEqual({
      client_id: body.clientId,
      request_uri: body.requestUri,
      request_uri_method: 'post',
    })
    expect(body.requestUri).toMatch(
      new RegExp(`^${PUBLIC_URL}/verifiers/${tenant}/requests/[A-Za-z0-9_-]{32}$`),
    )
    expect(body.requestUri).not.toContain(body.sessionId)

    const { header, leaf, claims } = await fetchRequest(body.requestUri)
    expect(header).toMatchObject({ typ: 'oauth-authz-req+jwt', alg: 'ES256' })
    expect((header.x5c as string[]).length).toBe(1) // HAIP: no trust anchor in x5c
    // The URI names the tenant's credential issuer (SD-JWT VC §3.5): key chains serve both roles.
    expect(leaf.subjectAltName).toBe(`DNS:verifier.example.com, URI:${PUBLIC_URL}/issuers/${tenant}`)
    expect(claims).toMatchObject({
      aud: 'https://self-issued.me/v2',
      client_id: body.clientId,
      response_type: 'vp_token',
      response_mode: 'direct_post.jwt',
      response_uri: `${PUBLIC_URL}/verifiers/${tenant}/responses/${new URL(body.requestUri).pathname.split('/').at(-1)}`,
      dcql_query: dcql,
      client_metadata: {
        vp_formats_supported: {
          'dc+sd-jwt': { 'kb-jwt_alg_values': expect.arrayContaining(['ES256']) },
          mso_mdoc: expect.any(Object),
        },
        encrypted_response_enc_values_supported: ['A128GCM', 'A256GCM'],
      },
    })
    // V-09, OpenID4VP 1.0 B.3.4 and B.1.3: fully specified JOSE names (RFC 9864: Ed25519, not EdDSA); B.2.2: COSE
    // ids, the fully specified ESP256 (-9) and ESP384 (-51) beside the header values HAIP names.
    expect(claims.client_metadata.vp_formats_supported).toStrictEqual({
      'dc+sd-jwt': {
        'sd-jwt_alg_values': ['ES256', 'ES384', 'Ed25519'],
        'kb-jwt_alg_values': ['ES256', 'ES384', 'Ed25519'],
      },
      mso_mdoc: { issuerauth_alg_values: [-7, -9, -35, -51], deviceauth_alg_values: [-7, -9, -35, -51] },
      // B.1.3 (jwt_vc): "alg_values: OPTIONAL … JWS algorithms" of the VC and the VP JWT.
      jwt_vc_json: { alg_values: ['ES256', 'ES384', 'Ed25519'] },
    })
    expect(claims.redirect_uri).toBeUndefined() // V-01: response_uri and no redirect_uri
    expect(claims.nonce).toMatch(/^[A-Za-z0-9_-]{43}$/) // 256 bits, URL-safe
    expect(claims.state).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const [key] = claims.client_metadata.jwks.keys as JWK[]
    expect(key).toMatchObject({
      kty: 'EC',
      crv: 'P-256',
      alg: 'ECDH-ES',
      use: 'enc',
      kid: expect.any(String),
    })
    expect(key).not.toHaveProperty('d')

    // V-09: every request has its own encryption key.
    const other = (
      await fetchRequest(
        (await post('/api/presentation-requests', { presentationConfigId: 'age' })).json().requestUri,
      )
    ).claims
    const thumb = (jwk: JWK) => calculateJwkThumbprint(jwk)
    expect(await thumb(other.client_metadata.jwks.keys[0])).not.toBe(await thumb(key as JWK))
    expect(other.nonce).not.toBe(claims.nonce)

    const session = await app.inject({ url: `/api/sessions/${body.sessionId}`, headers: admin })
    expect(session.json()).toMatchObject({
      id: body.sessionId,
      kind: 'presentation',
      status: 'pending',
      presentationConfigId: 'age',
      claims: null,
      requestFetchedAt: expect.any(String),
    })
  })

  it('OpenID4VP §5.10 (V-04): request_uri_method=post echoes wallet_nonce', async () => {
    const body = (await post('/api/presentation-requests', { presentationConfigId: 'age' })).json()
    expect((await fetchRequest(body.requestUri, 'wallet-nonce-123')).claims.wallet_nonce).toBe(
      'wallet-nonce-123',
    )
  })

  it('OpenID4VP §5.9.3 (V-05): x509_hash is the base64url SHA-256 of the leaf DER', async () => {
    const body = (await post('/api/presentation-requests', { presentationConfigId: 'age-hash' })).json()
    const { leaf, claims } = await fetchRequest(body.requestUri)
    const expected = `x509_hash:${createHash('sha256').update(leaf.raw).digest('base64url')}`
    expect(body.clientId).toBe(expected)
    expect(claims.client_id).toBe(expected)
  })

  it('OpenID4VP §5.9.3: "x509_san_dns" needs a DNS name in the leaf’s SAN; a key chain without one is a 422 naming the configuration, and no session is created', async () => {
    const chain = await post('/api/key-chains', {
      source: 'generate',
      id: 'no-dns-name',
      certificate: { dnsNames: [] },
    })
    expect(chain.statusCode, chain.body).toBe(201)
    const config = await post('/api/presentations', {
      id: 'no-dns-name',
      keyChainId: 'no-dns-name',
      clientIdPrefix: 'x509_san_dns',
      dcqlQuery: dcql,
    })
    expect(config.statusCode, config.body).toBe(201)
    const before = await sessionCount()
    const refused = await post('/api/presentation-requests', { presentationConfigId: 'no-dns-name' })
    expect(refused.statusCode, refused.body).toBe(422)
    expect(refused.headers['content-type']).toContain('application/problem+json')
    expect(refused.json().detail).toContain('SAN dNSName')
    expect(refused.json().errors).toStrictEqual([
      expect.objectContaining({ path: 'body.presentationConfigId' }),
    ])
    expect(await sessionCount()).toBe(before)
  })

  it('refuses an unknown configuration (422), a restricted client (403), and another tenant’s request (404)', async () => {
    expect((await post('/api/presentation-requests', { presentationConfigId: 'nope' })).statusCode).toBe(422)
    const auth = restricted
    expect((await post('/api/presentation-requests', { presentationConfigId: 'age' }, auth)).statusCode).toBe(
      403,
    )
    expect(
      (await post('/api/presentation-requests', { presentationConfigId: 'age-hash' }, auth)).statusCode,
    ).toBe(201)

    const body = (await post('/api/presentation-requests', { presentationConfigId: 'age' })).json()
    const requestId = new URL(body.requestUri).pathname.split('/').at(-1)
    expect((await app.inject({ url: `/verifiers/someone-else/requests/${requestId}` })).statusCode).toBe(404)
    expect((await app.inject({ url: `/verifiers/${tenant}/requests/unknown-request` })).statusCode).toBe(404)
  })

  /** Presentation sessions of the tenant, straight from the table: a refused request writes none. */
  const sessionCount = async () => {
    const [row] = await database.db
      .select({ n: count() })
      .from(schema.presentationSessions)
      .where(eq(schema.presentationSessions.tenantId, tenant))
    return row?.n ?? 0
  }

  it('issue 11: a javascript:, data: or http redirect URI is a 422 problem naming body.redirectUri; no session is created', async () => {
    const before = await sessionCount()
    for (const [redirectUri, scheme] of [
      ['javascript:alert(document.cookie)', 'javascript'],
      ['data:text/html,<script>alert(1)</script>', 'data'],
      ['http://rp.example.com/done', 'http'],
    ]) {
      const response = await post('/api/presentation-requests', { presentationConfigId: 'age', redirectUri })
      expect(response.statusCode, redirectUri).toBe(422)
      expect(response.headers['content-type']).toContain('application/problem+json')
      expect(response.json()).toMatchObject({ status: 422, code: 'rule_violation' })
      expect(response.json().errors).toStrictEqual([
        { path: 'body.redirectUri', message: `must use https, not '${scheme}'` },
      ])
    }
    expect(await sessionCount()).toBe(before)
    const ok = await post('/api/presentation-requests', {
      presentationConfigId: 'age',
      redirectUri: 'https://rp.example.com/done',
    })
    expect(ok.statusCode, ok.body).toBe(201)
    expect(await sessionCount()).toBe(before + 1)
  })

  it('S-105: a webhookEndpointId of another tenant is a 422 naming body.webhookEndpointId; no session is created', async () => {
    const before = await sessionCount()
    const response = await post('/api/presentation-requests', {
      presentationConfigId: 'age',
      webhookEndpointId: 'results',
    })
    expect(response.statusCode).toBe(422)
    expect(response.json().errors).toStrictEqual([
      { path: 'body.webhookEndpointId', message: "no webhookEndpoint 'results' in this tenant" },
    ])
    expect(await sessionCount()).toBe(before)
  })
})
