import { createHash, randomBytes } from 'node:crypto'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { setGlobalConfig } from '@openid4vc/oauth2'
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import type { FastifyInstance } from 'fastify'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { bearer, startAllInOne } from './harness'
import { resolveAndAnswer } from './oid4vp-wallet'
import { issue, setUpTenant, VCT } from './session-fixtures'
import { kbSigner } from './wallet'

setGlobalConfig({ allowInsecureUrls: true })

const REDIRECT = 'https://wallet.example/cb'
// biome-ignore lint/suspicious/noExplicitAny: tests read loosely typed JSON answers
type Json = any
type Issued = Awaited<ReturnType<typeof issue>>

const b64 = (bytes: Buffer) => bytes.toString('base64url')
const unescapeHtml = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')

/** The page's two requests and status URL, as a wallet (or a test) reads them from the HTML. */
export function readPage(html: string) {
  const pick = (pattern: RegExp) => unescapeHtml((pattern.exec(html) as RegExpExecArray)[1] as string)
  return {
    sameDevice: pick(/id="same-device" href="([^"]+)"/),
    crossDevice: pick(/<code id="cross-device-request">([^<]+)<\/code>/),
    status: pick(/data-status="([^"]+)"/),
  }
}

/**
 * Issue 26 (presentation during issuance), the browser fallback: a credential whose login provider
 * is of kind `presentation` is issued after the holder presented a PID at the page /authorize shows
 * (OpenID4VP 1.0 cross-device and same-device, §13.3 response code, §14.2 session fixation).
 */
describe('issue 26: presentation login in the authorization code flow (browser page)', () => {
  let app: FastifyInstance
  let baseUrl: string
  let auth: Record<string, string>
  let tenant: string
  let pid: Issued
  let untrustedPid: Issued
  const issuer = () => `${baseUrl}/issuers/${tenant}`

  beforeAll(async () => {
    const port = await freePort()
    baseUrl = `http://127.0.0.1:${port}`
    const started = await startAllInOne(testDatabases().at(-1) as TestDatabase, baseUrl, {
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    })
    app = started.app
    await app.listen({ host: '127.0.0.1', port })
    const root = await bearer(app, started.rootClientId, started.rootSecret)
    tenant = `plogin-${randomBytes(4).toString('hex')}`
    const roles = [
      'key:manage',
      'issuance:config',
      'issuance:offer',
      'presentation:config',
      'presentation:request',
    ]
    ;({ auth } = await setUpTenant(app, root, tenant, roles))
    const other = await setUpTenant(app, root, `${tenant}-x`, roles)
    const post = async (url: string, payload: object) => {
      const response = await app.inject({ method: 'POST', url, headers: auth, payload })
      expect(response.statusCode, response.body).toBe(201)
    }
    await post('/api/presentations', {
      id: 'pid-login',
      keyChainId: 'keys',
      responseMode: 'direct_post',
      dcqlQuery: {
        credentials: [
          { id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: [VCT] }, claims: [{ path: ['given_name'] }] },
        ],
      },
    })
    await post('/api/login-providers', {
      id: 'pid-login',
      kind: 'presentation',
      presentationConfigId: 'pid-login',
    })
    await post('/api/credentials', {
      id: 'badge',
      config: { format: 'dc+sd-jwt', vct: 'urn:example:badge' },
      keyChainId: 'keys',
      fields: [{ path: ['holder_name'], type: 'string' }],
      userAuthentication: { loginProviderId: 'pid-login', claims: { holder_name: ['given_name'] } },
    })
    pid = await issue(app, auth, { given_name: 'Erika', age_over_18: true })
    // A PID of another tenant: an issuer this tenant's presentation configuration does not trust.
    untrustedPid = await issue(app, other.auth, { given_name: 'Mallory', age_over_18: true })
  }, 120_000)
  afterAll(() => app.close())

  /** PAR for `badge` (no offer: the presentation logs the holder in), then /authorize. */
  async function start() {
    const verifier = b64(randomBytes(32))
    const challenge = b64(createHash('sha256').update(verifier).digest())
    const pushed = await fetch(`${issuer()}/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        response_type: 'code',
        client_id: 'wallet-1',
        redirect_uri: REDIRECT,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        scope: 'badge',
        state: 'wallet-state',
      }).toString(),
    })
    expect(pushed.status).toBe(201)
    const { request_uri } = (await pushed.json()) as Json
    const page = await fetch(
      `${issuer()}/authorize?${new URLSearchParams({ client_id: 'wallet-1', request_uri })}`,
      { redirect: 'manual' },
    )
    expect(page.status).toBe(200)
    const cookie = (page.headers.getSetCookie()[0] as string).split(';')[0] as string
    return { verifier, page, html: await page.text(), cookie }
  }

  /** The wallet answers a request URI with the PID (the DCQL query's `pid`), disclosing given_name. */
  const present = (requestUri: string, credential: Issued = pid) =>
    resolveAndAnswer(requestUri, async (request) => {
      const wallet = new SDJwtVcInstance({
        hasher: digest,
        saltGenerator: generateSalt,
        kbSigner: kbSigner(credential.holder.privateKey),
        kbSignAlg: 'ES256',
      })
      const vp = await wallet.present(
        credential.credential,
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
      )
      return { pid: [vp] }
    })

  const poll = async (statusUrl: string, cookie?: string) => {
    const response = await fetch(statusUrl, { headers: cookie ? { cookie } : {} })
    return { status: response.status, body: (await response.json()) as Json }
  }

  const returnWith = async (requestId: string, responseCode: string, cookie?: string) => {
    const response = await fetch(`${issuer()}/authorize/presentation/return`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
      body: JSON.stringify({ request: requestId, response_code: responseCode }),
    })
    return { status: response.status, body: (await response.json()) as Json }
  }

  /** Token and credential for a code: the badge's claims. */
  async function redeem(code: string, verifier: string) {
    const token = await fetch(`${issuer()}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
        client_id: 'wallet-1',
      }).toString(),
    })
    const tokens = (await token.json()) as Json
    expect(token.status, JSON.stringify(tokens)).toBe(200)
    const { c_nonce } = (await (await fetch(`${issuer()}/nonce`, { method: 'POST' })).json()) as Json
    const holder = await generateKeyPair('ES256')
    const proof = await new SignJWT({ nonce: c_nonce })
      .setProtectedHeader({
        alg: 'ES256',
        typ: 'openid4vci-proof+jwt',
        jwk: await exportJWK(holder.publicKey),
      })
      .setAudience(issuer())
      .setIssuedAt()
      .sign(holder.privateKey)
    const credential = await fetch(`${issuer()}/credential`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.access_token}` },
      body: JSON.stringify({ credential_configuration_id: 'badge', proofs: { jwt: [proof] } }),
    })
    const body = (await credential.json()) as Json
    expect(credential.status, JSON.stringify(body)).toBe(200)
    return (await new SDJwtVcInstance({ hasher: digest }).getClaims(body.credentials[0].credential)) as Json
  }

  it('the page: QR code, same-device link, strict CSP, no-store, no framing, no referrer', async () => {
    const { page, html } = await start()
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    expect(page.headers.get('cache-control')).toBe('no-store')
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(page.headers.get('referrer-policy')).toBe('no-referrer')
    const csp = page.headers.get('content-security-policy') as string
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).toMatch(/script-src 'nonce-[^']+'/)
    expect(page.headers.getSetCookie()[0]).toMatch(/HttpOnly; Secure; SameSite=Lax/)
    expect(html).toContain('<svg class="qr"')
    expect(html).not.toMatch(/<script(?![^>]*nonce=)/)
    expect(html).not.toMatch(/ on[a-z]+=/)
    expect(html).not.toMatch(/(src|href)="https?:/)
    const { sameDevice, crossDevice } = readPage(html)
    expect(sameDevice).toMatch(/^openid4vp:\/\//)
    expect(crossDevice).toMatch(/^openid4vp:\/\//)
    expect(sameDevice).not.toBe(crossDevice)
  })

  it('cross-device: the wallet presents the PID, the page polls, the code issues the badge with the mapped claim', async () => {
    const { html, cookie, verifier } = await start()
    const { crossDevice, status } = readPage(html)
    expect((await poll(status, cookie)).body).toStrictEqual({ status: 'pending' })
    const answered = await present(crossDevice)
    expect(answered.status, answered.body).toBe(200)
    // Polling from a browser without the login cookie learns nothing and finishes nothing.
    expect((await poll(status)).status).toBe(403)
    expect((await poll(status, 'authz_login=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).status).toBe(403)
    const done = await poll(status, cookie)
    expect(done.body.status).toBe('done')
    const back = new URL(done.body.redirect)
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT)
    expect(back.searchParams.get('state')).toBe('wallet-state')
    expect(back.searchParams.get('iss')).toBe(issuer())
    const code = back.searchParams.get('code') as string
    expect(code).toBeTruthy()
    // A second completion does nothing (the request moved on by a conditional update).
    const again = await poll(status, cookie)
    expect(again.body.redirect).toBeUndefined()
    const claims = await redeem(code, verifier)
    expect(claims.holder_name).toBe('Erika')
    expect(claims.vct).toBe('urn:example:badge')
  })

  it('OpenID4VP 1.0 §13.3 same-device: the response code with the login cookie gets the code, once', async () => {
    const { html, cookie, verifier } = await start()
    const { sameDevice, status } = readPage(html)
    const requestId = new URL(status).searchParams.get('request') as string
    const answered = await present(sameDevice)
    expect(answered.status, answered.body).toBe(200)
    const redirect = new URL(JSON.parse(answered.body).redirect_uri)
    expect(`${redirect.origin}${redirect.pathname}`).toBe(`${issuer()}/authorize/presentation/return`)
    const responseCode = new URLSearchParams(redirect.hash.slice(1)).get('response_code') as string
    // The return page reads the fragment and posts it; it is served with the same headers.
    const returnPage = await fetch(redirect.toString().split('#')[0] as string)
    expect(returnPage.status).toBe(200)
    expect(returnPage.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    // §14.2 session fixation: from another browser (no or another cookie) the code is refused.
    expect((await returnWith(requestId, responseCode)).status).toBe(403)
    const stranger = `authz_login=${b64(randomBytes(32))}`
    expect((await returnWith(requestId, responseCode, stranger)).status).toBe(403)
    // A wrong code from the right browser is refused too.
    expect((await returnWith(requestId, b64(randomBytes(32)), cookie)).status).toBe(403)
    // Polling does not finish a same-device session: only its response code does.
    expect((await poll(status, cookie)).body).toStrictEqual({ status: 'pending' })
    const done = await returnWith(requestId, responseCode, cookie)
    expect(done.status, JSON.stringify(done.body)).toBe(200)
    const code = new URL(done.body.redirect).searchParams.get('code') as string
    expect(code).toBeTruthy()
    // Replayed: refused, never a second code.
    const replay = await returnWith(requestId, responseCode, cookie)
    expect(replay.status).toBe(403)
    expect(replay.body.redirect).toBeUndefined()
    expect((await redeem(code, verifier)).holder_name).toBe('Erika')
  })

  it('a response code of another login request is refused', async () => {
    const first = await start()
    const second = await start()
    const secondId = new URL(readPage(second.html).status).searchParams.get('request') as string
    const answered = await present(readPage(first.html).sameDevice)
    const responseCode = new URLSearchParams(
      new URL(JSON.parse(answered.body).redirect_uri).hash.slice(1),
    ).get('response_code') as string
    // The second request, with its own browser's cookie, and the first's code: refused.
    expect((await returnWith(secondId, responseCode, second.cookie)).status).toBe(403)
  })

  it('a PID of an untrusted issuer: the page shows why and the wallet gets access_denied', async () => {
    const { html, cookie } = await start()
    const { crossDevice, status } = readPage(html)
    const answered = await present(crossDevice, untrustedPid)
    expect(answered.status).toBe(400)
    const failed = await poll(status, cookie)
    expect(failed.body.status).toBe('failed')
    expect(failed.body.reason).toMatch(/not trusted|could not be verified/)
    const back = new URL(failed.body.redirect)
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(back.searchParams.get('code')).toBeNull()
    expect(back.searchParams.get('state')).toBe('wallet-state')
  })

  it('management (issue 26): a mapping to a claim the presentation query does not ask for is refused at save (422)', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/credentials',
      headers: auth,
      payload: {
        id: 'badge-2',
        config: { format: 'dc+sd-jwt', vct: 'urn:example:badge2' },
        keyChainId: 'keys',
        fields: [{ path: ['holder_name'], type: 'string' }],
        userAuthentication: { loginProviderId: 'pid-login', claims: { holder_name: ['family_name'] } },
      },
    })
    expect(response.statusCode, response.body).toBe(422)
  })
})
