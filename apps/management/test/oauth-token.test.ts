import { testDatabases } from '@credential-service/db-schema/testing'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from './harness'

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`

describe.each(testDatabases())('POST /api/oauth2/token on $name', (testDatabase) => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness(testDatabase)
  })
  afterAll(() => h.close())

  const token = (payload: unknown, headers: Record<string, string> = {}) =>
    h.app.inject({ method: 'POST', url: '/api/oauth2/token', payload: payload as string, headers })

  describe('happy', () => {
    it('RFC 6749 §4.4: credentials in a JSON body give a Bearer JWT with no-store', async () => {
      const response = await token({
        grant_type: 'client_credentials',
        client_id: h.root.clientId,
        client_secret: h.root.clientSecret,
      })
      expect(response.statusCode).toBe(200)
      expect(response.headers['cache-control']).toBe('no-store')
      const body = response.json()
      expect(body).toStrictEqual({
        access_token: expect.any(String),
        token_type: 'Bearer',
        expires_in: 3600,
        scope: 'tenant:manage',
      })
      const claims = decodeJwt(body.access_token)
      expect(claims).toStrictEqual({
        iss: 'https://issuer.test/api',
        aud: 'https://issuer.test/api',
        client_id: h.root.clientId,
        roles: ['tenant:manage'],
        iat: expect.any(Number),
        exp: (claims.iat as number) + 3600,
        jti: expect.any(String),
      })
      expect(claims.sub).toBeUndefined() // operator client: bound to no tenant
      expect(decodeProtectedHeader(body.access_token).alg).toBe('EdDSA')
    })

    it('RFC 6749 §2.3.1: credentials by Authorization: Basic', async () => {
      const response = await token(
        { grant_type: 'client_credentials' },
        { authorization: basic(h.root.clientId, h.root.clientSecret) },
      )
      expect(response.statusCode).toBe(200)
    })

    it('RFC 6749 §4.4.2: an application/x-www-form-urlencoded body', async () => {
      const form = new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: h.root.clientId,
        client_secret: h.root.clientSecret,
      })
      const response = await token(form.toString(), { 'content-type': 'application/x-www-form-urlencoded' })
      expect(response.statusCode).toBe(200)
    })

    it('a tenant client token carries the tenant as sub and its roles', async () => {
      const client = await h.createClient(h.tenantA, ['issuance:offer', 'key:read'])
      const claims = decodeJwt(client.token)
      expect(claims.sub).toBe(h.tenantA)
      expect(claims.roles).toStrictEqual(['issuance:offer', 'key:read'])
    })

    it('RFC 6749 §3.3: scope narrows the roles; a role the client lacks is invalid_scope', async () => {
      const client = await h.createClient(h.tenantA, ['issuance:offer', 'key:read'])
      const narrowed = await token({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: client.clientSecret,
        scope: 'key:read',
      })
      expect(narrowed.json().scope).toBe('key:read')
      expect(decodeJwt(narrowed.json().access_token).roles).toStrictEqual(['key:read'])
      const wider = await token({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: client.clientSecret,
        scope: 'key:manage',
      })
      expect(wider.statusCode).toBe(400)
      expect(wider.json().error).toBe('invalid_scope')
    })

    it('RFC 8414: metadata and JWKS under /api verify the token', async () => {
      const metadata = (await h.app.inject({ url: '/api/.well-known/oauth-authorization-server' })).json()
      expect(metadata).toMatchObject({
        issuer: 'https://issuer.test/api',
        token_endpoint: 'https://issuer.test/api/oauth2/token',
        jwks_uri: 'https://issuer.test/api/oauth2/jwks',
        grant_types_supported: ['client_credentials'],
      })
      const jwks = (await h.app.inject({ url: '/api/oauth2/jwks' })).json()
      const { createLocalJWKSet, jwtVerify } = await import('jose')
      const { payload } = await jwtVerify(h.root.token, createLocalJWKSet(jwks), { issuer: metadata.issuer })
      expect(payload.client_id).toBe(h.root.clientId)
      expect(JSON.stringify(jwks)).not.toContain('"d"')
    })
  })

  describe('error', () => {
    it('RFC 6749 §5.2: a wrong secret is invalid_client 401 with WWW-Authenticate', async () => {
      const response = await token({
        grant_type: 'client_credentials',
        client_id: h.root.clientId,
        client_secret: 'wrong-secret-wrong-secret',
      })
      expect(response.statusCode).toBe(401)
      expect(response.headers['www-authenticate']).toMatch(/^Basic realm=/)
      expect(response.headers['cache-control']).toBe('no-store')
      expect(response.json()).toStrictEqual({
        error: 'invalid_client',
        error_description: 'client authentication failed',
      })
    })

    it('RFC 6749 §5.2: an unknown client answers exactly like a wrong secret', async () => {
      const response = await token({
        grant_type: 'client_credentials',
        client_id: 'no-such-client',
        client_secret: 'whatever-secret-123',
      })
      expect(response.statusCode).toBe(401)
      expect(response.json()).toStrictEqual({
        error: 'invalid_client',
        error_description: 'client authentication failed',
      })
    })

    it('RFC 6749 §5.2: another grant is unsupported_grant_type', async () => {
      const response = await token({
        grant_type: 'password',
        client_id: h.root.clientId,
        client_secret: h.root.clientSecret,
      })
      expect(response.statusCode).toBe(400)
      expect(response.json().error).toBe('unsupported_grant_type')
    })

    it('RFC 6749 §5.2: a missing grant_type is invalid_request', async () => {
      const response = await token({ client_id: h.root.clientId, client_secret: h.root.clientSecret })
      expect(response.statusCode).toBe(400)
      expect(response.json().error).toBe('invalid_request')
      expect(response.headers['cache-control']).toBe('no-store')
    })

    it('RFC 6749 §2.3: credentials in both Basic and the body are invalid_request', async () => {
      const response = await token(
        { grant_type: 'client_credentials', client_id: h.root.clientId, client_secret: h.root.clientSecret },
        { authorization: basic(h.root.clientId, h.root.clientSecret) },
      )
      expect(response.statusCode).toBe(400)
      expect(response.json().error).toBe('invalid_request')
    })

    it('no credentials at all is invalid_client', async () => {
      const response = await token({ grant_type: 'client_credentials' })
      expect(response.statusCode).toBe(401)
      expect(response.json().error).toBe('invalid_client')
    })

    it('malformed JSON is invalid_request, not a 500', async () => {
      const response = await token('{"grant_type": ', { 'content-type': 'application/json' })
      expect(response.statusCode).toBe(400)
      expect(response.json().error).toBe('invalid_request')
    })

    it('an unsupported content type is refused with an OAuth error', async () => {
      const response = await token('grant_type=client_credentials', { 'content-type': 'text/plain' })
      expect(response.statusCode).toBe(415)
      expect(response.json().error).toBe('invalid_request')
    })
  })
})
