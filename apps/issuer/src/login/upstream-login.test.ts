import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { UpstreamError } from '@credential-service/core-domain'
import { createJwkCipher } from '@credential-service/crypto'
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { finishLogin, type LoginSecrets, type OpenIdLoginProvider, startLogin } from './upstream-login'

// The upstream provider is a small local OpenID provider whose ID tokens each test writes.
const CLIENT_ID = 'issuer-login'
const REDIRECT = 'https://issuer.example/issuers/t/authorize/callback'
const secrets: LoginSecrets = { nonce: 'the-nonce', codeVerifier: 'v'.repeat(43) }
const deps = {
  cipher: createJwkCipher('upstream-login-test-master-secret-0123456789'),
  outbound: { allowHttp: true, allowedHosts: ['127.0.0.1'], maxResponseBytes: 100_000 },
  now: () => new Date(),
}

describe('upstream login: ID token and authorization response checks (OIDC Core §3.1.3.7, RFC 9207)', () => {
  let server: Server
  let issuer: string
  let provider: OpenIdLoginProvider
  let keys: Awaited<ReturnType<typeof generateKeyPair>>
  /** What the token endpoint answers as `id_token`. */
  let idToken = ''
  let issParameterSupported = false
  let tokenRequests = 0

  const seconds = () => Math.floor(Date.now() / 1000)
  const claims = (over: Record<string, unknown> = {}): JWTPayload => ({
    iss: issuer,
    sub: 'alice',
    aud: CLIENT_ID,
    nonce: secrets.nonce,
    iat: seconds(),
    exp: seconds() + 300,
    ...over,
  })
  const signed = (payload: JWTPayload) =>
    new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(keys.privateKey)
  /** Signs `payload` without `undefined` claims (how a test leaves one out). */
  const without = (payload: JWTPayload) =>
    signed(Object.fromEntries(Object.entries(payload).filter(([, v]) => v !== undefined)))
  const finish = (iss?: string) =>
    finishLogin(provider, { code: 'upstream-code', iss, redirectUri: REDIRECT, secrets }, deps)
  const refusal = async (iss?: string) => {
    const error = await finish(iss).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(UpstreamError)
    return (error as UpstreamError).detail
  }

  beforeAll(async () => {
    keys = await generateKeyPair('ES256')
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }
    server = createServer((req, res) => {
      const json = (body: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(body))
      }
      if (req.url === '/.well-known/openid-configuration')
        return json({
          issuer,
          authorization_endpoint: `${issuer}/auth`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          ...(issParameterSupported ? { authorization_response_iss_parameter_supported: true } : {}),
        })
      if (req.url === '/jwks') return json({ keys: [jwk] })
      if (req.url === '/token') {
        tokenRequests++
        return json({ token_type: 'Bearer', access_token: 'at', id_token: idToken })
      }
      res.writeHead(404).end()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    provider = {
      tenantId: 't',
      id: 'idp',
      description: null,
      kind: 'openid',
      presentationConfigId: null,
      issuer,
      clientId: CLIENT_ID,
      clientSecretEncrypted: null,
      scopes: ['profile'],
      createdAt: new Date(),
      updatedAt: new Date(),
    }
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
  beforeEach(() => {
    issParameterSupported = false
    tokenRequests = 0
  })

  it('OIDC Core §3.1.2.1 (I-36): the login request asks for a fresh login (prompt=login) with state, nonce and PKCE S256', async () => {
    const { url, secrets: made } = await startLogin(provider, { redirectUri: REDIRECT, state: 's1' }, deps)
    const params = new URL(url).searchParams
    expect(params.get('prompt')).toBe('login')
    expect(params.get('state')).toBe('s1')
    expect(params.get('nonce')).toBe(made.nonce)
    expect(params.get('code_challenge_method')).toBe('S256')
    expect(params.get('scope')).toBe('openid profile')
  })

  it('OIDC Core §3.1.3.7: a valid ID token gives the user', async () => {
    idToken = await signed(claims())
    expect(await finish()).toMatchObject({ issuer, sub: 'alice', claims: { sub: 'alice' } })
  })

  it('OIDC Core §3.1.3.7 (11): an ID token of another nonce is refused', async () => {
    idToken = await signed(claims({ nonce: 'another-login' }))
    expect(await refusal()).toMatch(/another login/)
  })

  it('OIDC Core §3.1.3.7 (3): an ID token for another audience is refused', async () => {
    idToken = await signed(claims({ aud: 'another-client' }))
    expect(await refusal()).toMatch(/invalid ID token/)
  })

  it('OIDC Core §2, §3.1.3.7 (9, 10): an ID token without exp, iat, sub or nonce, or issued too long ago, is refused', async () => {
    for (const left of ['exp', 'iat', 'sub', 'nonce']) {
      idToken = await without(claims({ [left]: undefined }))
      expect(await refusal(), left).toMatch(/invalid ID token/)
    }
    idToken = await signed(claims({ iat: seconds() - 3600 }))
    expect(await refusal()).toMatch(/invalid ID token/)
  })

  it('OIDC Core §3.1.3.7 (6, 7), RFC 8725 §3.1: HS256 and unsigned (alg none) ID tokens are refused', async () => {
    idToken = await new SignJWT(claims())
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('a-shared-secret-that-is-long-enough-for-hs256'))
    expect(await refusal()).toMatch(/invalid ID token/)
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
    idToken = `${part({ alg: 'none' })}.${part(claims())}.`
    expect(await refusal()).toMatch(/invalid ID token/)
  })

  it('OIDC Core §3.1.3.7 (4, 5): with several audiences, azp must name this client', async () => {
    idToken = await signed(claims({ aud: [CLIENT_ID, 'other'] }))
    expect(await refusal()).toMatch(/azp/)
    idToken = await signed(claims({ aud: [CLIENT_ID, 'other'], azp: 'other' }))
    expect(await refusal()).toMatch(/azp/)
    idToken = await signed(claims({ aud: [CLIENT_ID, 'other'], azp: CLIENT_ID }))
    expect((await finish()).sub).toBe('alice')
  })

  it('RFC 9207 §2.4: the response iss must be the provider; a provider that sends it must have; no code is exchanged otherwise', async () => {
    idToken = await signed(claims())
    expect(await refusal('https://mix-up.example')).toMatch(/another issuer/)
    issParameterSupported = true
    expect(await refusal()).toMatch(/another issuer/)
    expect(await refusal('https://mix-up.example')).toMatch(/another issuer/)
    expect(tokenRequests).toBe(0)
    expect((await finish(issuer)).sub).toBe('alice')
    expect(tokenRequests).toBe(1)
  })
})
