import { randomBytes } from 'node:crypto'
import { setGlobalConfig } from '@openid4vc/oauth2'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { b64, REDIRECT, readPage, startPresentationLogin } from './presentation-login-fixtures'

setGlobalConfig({ allowInsecureUrls: true })

// biome-ignore lint/suspicious/noExplicitAny: tests read loosely typed JSON answers
type Json = any

/**
 * Issue 26 (presentation during issuance), the browser fallback: a credential whose login provider
 * is of kind `presentation` is issued after the holder presented a PID at the page /authorize shows
 * (OpenID4VP 1.0 cross-device and same-device, §13.3 response code, §14.2 session fixation).
 */
describe('issue 26: presentation login in the authorization code flow (browser page)', () => {
  let world: Awaited<ReturnType<typeof startPresentationLogin>>
  const issuer = () => world.issuer

  beforeAll(async () => {
    world = await startPresentationLogin()
  }, 120_000)
  afterAll(() => world.app.close())

  /** PAR, then /authorize: the page, its cookie and the PKCE verifier. */
  async function start() {
    const { verifier, authorizeUrl } = await world.push()
    const page = await fetch(authorizeUrl, { redirect: 'manual' })
    expect(page.status).toBe(200)
    const cookie = (page.headers.getSetCookie()[0] as string).split(';')[0] as string
    return { verifier, page, html: await page.text(), cookie }
  }
  const present = (...args: Parameters<typeof world.present>) => world.present(...args)
  const redeem = (code: string, verifier: string) => world.redeem(code, verifier)

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
    // The presented claims left the presentation session with the code: none kept after the flow.
    const sessions = await world.loginSessions()
    expect(sessions.filter((s) => s.status === 'verified')).toHaveLength(1)
    expect(sessions.filter((s) => s.kept)).toStrictEqual([])
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
    expect((await world.loginSessions()).filter((s) => s.kept)).toStrictEqual([])
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
    const answered = await present(crossDevice, world.untrustedPid)
    expect(answered.status).toBe(400)
    const failed = await poll(status, cookie)
    expect(failed.body.status).toBe('failed')
    expect(failed.body.reason).toBe('the credential’s issuer is not trusted')
    const back = new URL(failed.body.redirect)
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(back.searchParams.get('code')).toBeNull()
    expect(back.searchParams.get('state')).toBe('wallet-state')
  })

  it('a PID presented without the claim the query asks for: failed, access_denied', async () => {
    const { html, cookie } = await start()
    const { crossDevice, status } = readPage(html)
    const answered = await present(crossDevice, world.pid, { age_over_18: true })
    expect(answered.status).toBe(400)
    const failed = await poll(status, cookie)
    expect(failed.body.status).toBe('failed')
    expect(failed.body.reason).toBe('the credential does not hold the claims asked for')
    expect(new URL(failed.body.redirect).searchParams.get('error')).toBe('access_denied')
  })

  it('two polls at once after the presentation: one code (the request moves by one conditional update)', async () => {
    const { html, cookie } = await start()
    const { crossDevice, status } = readPage(html)
    expect((await present(crossDevice)).status).toBe(200)
    const answers = await Promise.all([1, 2, 3].map(() => poll(status, cookie)))
    const codes = answers.filter((a) => a.body.redirect && new URL(a.body.redirect).searchParams.get('code'))
    expect(codes).toHaveLength(1)
  })

  it('management (issue 26): a mapping to a claim the presentation query does not ask for is refused at save (422)', async () => {
    const response = await world.app.inject({
      method: 'POST',
      url: '/api/credentials',
      headers: world.auth,
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
