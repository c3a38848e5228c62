import { setGlobalConfig } from '@openid4vc/oauth2'
import { type Browser, chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHROMIUM, skipWithoutChromium } from '../../console/test/browser'
import { REDIRECT, startPresentationLogin } from './presentation-login-fixtures'

setGlobalConfig({ allowInsecureUrls: true })
const skip = skipWithoutChromium('presentation-login-browser.test.ts')

/**
 * Issue 26 in headless Chromium: the presentation login page /authorize shows (OpenID4VP 1.0
 * cross-device), under its strict Content-Security-Policy, polls until the wallet presented and then
 * takes the browser to the wallet's redirect_uri with a code.
 */
describe.skipIf(skip)('issue 26: the presentation login page in Chromium', () => {
  let world: Awaited<ReturnType<typeof startPresentationLogin>>
  let browser: Browser

  beforeAll(async () => {
    // localhost: a potentially trustworthy origin, where Chromium keeps the Secure login cookie.
    world = await startPresentationLogin('localhost')
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // Chromium's sandbox needs user namespaces, which root in a container does not get.
      args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    })
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await world?.app.close()
  })

  it('renders the QR code and the same-device link, blocks nothing it needs, and after a cross-device presentation navigates to the wallet with a code', async () => {
    const { verifier, authorizeUrl } = await world.push()
    const page = await browser.newPage()
    page.setDefaultTimeout(20_000)
    const problems: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text())
    })
    page.on('pageerror', (error) => problems.push(error.message))
    // The wallet's redirect_uri: a page of the wallet, here answered by the test.
    await page.route(`${REDIRECT}**`, (route) =>
      route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>wallet</title>' }),
    )
    const response = await page.goto(authorizeUrl)
    expect(response?.status()).toBe(200)
    await expect.poll(() => page.locator('svg.qr').count()).toBe(1)
    expect(await page.locator('svg.qr path').count()).toBeGreaterThan(0)
    const box = await page.locator('svg.qr').boundingBox()
    expect(box?.width).toBeGreaterThan(100)
    const link = page.getByRole('link', { name: 'Open wallet on this device' })
    expect(await link.getAttribute('href')).toMatch(/^openid4vp:\/\//)
    expect(await page.getByRole('status').textContent()).toContain('Waiting')
    const crossDevice = (await page.locator('#cross-device-request').textContent()) as string

    // The wallet (this process) presents the PID from the page's cross-device request.
    const answered = await world.present(crossDevice)
    expect(answered.status, answered.body).toBe(200)

    await page.waitForURL((url) => url.toString().startsWith(REDIRECT))
    const back = new URL(page.url())
    expect(back.searchParams.get('state')).toBe('wallet-state')
    expect(back.searchParams.get('iss')).toBe(world.issuer)
    const code = back.searchParams.get('code') as string
    expect(code).toBeTruthy()
    expect(problems).toStrictEqual([])
    expect((await world.redeem(code, verifier)).holder_name).toBe('Erika')
    await page.close()
  })

  it('OpenID4VP 1.0 §13.3 same-device: the wallet’s redirect opens the return page in this browser, which posts the response code and goes on to the wallet with a code', async () => {
    const { verifier, authorizeUrl } = await world.push()
    const context = await browser.newContext()
    const page = await context.newPage()
    page.setDefaultTimeout(20_000)
    const problems: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text())
    })
    page.on('pageerror', (error) => problems.push(error.message))
    await page.route(`${REDIRECT}**`, (route) =>
      route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>wallet</title>' }),
    )
    await page.goto(authorizeUrl)
    const sameDevice = (await page
      .getByRole('link', { name: 'Open wallet on this device' })
      .getAttribute('href')) as string
    const answered = await world.present(sameDevice)
    expect(answered.status, answered.body).toBe(200)
    // The wallet app hands its redirect (with #response_code) back to the browser.
    await page.goto(JSON.parse(answered.body).redirect_uri)
    await page.waitForURL((url) => url.toString().startsWith(REDIRECT))
    const code = new URL(page.url()).searchParams.get('code') as string
    expect(code).toBeTruthy()
    expect(problems).toStrictEqual([])
    expect((await world.redeem(code, verifier)).holder_name).toBe('Erika')

    // The same redirect opened in another browser (no login cookie): refused, shown, no code.
    const other = await browser.newContext()
    const stranger = await other.newPage()
    await stranger.goto(JSON.parse(answered.body).redirect_uri)
    await expect.poll(() => stranger.getByRole('status').textContent()).toContain('cannot be finished here')
    expect(stranger.url()).not.toContain(REDIRECT)
    await other.close()
    await context.close()
  })
})
