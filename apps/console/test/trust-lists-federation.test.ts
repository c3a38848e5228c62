import { generateKeyPairSync, randomBytes } from 'node:crypto'
import type { ManagementClient } from '@credential-service/sdk'
import type { Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  type ConsoleUnderTest,
  closeDialogs,
  errorOf,
  expectAccessible as expectAccessibleIn,
  signIn,
  skipWithoutChromium,
  startConsole,
  tenantClient,
} from './browser'

/**
 * The trust-list form with the `openid-federation` source (issue 39, OpenID Federation 1.0 §10):
 * an anchor's entity identifier, its keys and the trust mark types issuers must hold, created,
 * shown and edited in Chromium, checked with axe. One server, one page: each case goes on from
 * where the one before left off.
 */
const skip = skipWithoutChromium('trust-lists-federation.test.ts')
const ANCHOR = 'https://anchor.federation.test'
const OTHER_ANCHOR = 'https://other-anchor.federation.test'
const MARK = 'https://marks.federation.test/verified-issuer'

describe.skipIf(skip)('console trust lists of source type openid-federation in Chromium (issue 39)', () => {
  const root = { id: `root-${randomBytes(4).toString('hex')}`, secret: randomBytes(24).toString('base64url') }
  const tenant = `t-${randomBytes(4).toString('hex')}`
  const admin = { id: `${tenant}-tl`, secret: randomBytes(18).toString('base64url') }
  let harness: ConsoleUnderTest
  let page: Page
  let api: ManagementClient
  const anchorKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const anchorJwks = {
    keys: [{ ...anchorKey.publicKey.export({ format: 'jwk' }), kid: 'anchor-1', alg: 'ES256' }],
  }

  beforeAll(async () => {
    harness = await startConsole(root)
    page = harness.page
    api = await tenantClient(harness, root, tenant, admin, ['presentation:config'])
    await page.goto(harness.url('/trust-lists'))
    await signIn(page, admin.id, admin.secret)
  }, 90_000)

  afterAll(async () => {
    await harness?.stop()
  })

  afterEach(() => closeDialogs(page))

  const expectAccessible = (what: string) => expectAccessibleIn(page, what)
  const dialog = (name: string) => page.getByRole('dialog', { name })

  it('creates one: anchor, JWKS (not JSON is named at the field, nothing sent) and a required trust mark type; passes axe', async () => {
    await page.getByRole('heading', { name: `Trust lists of ${tenant}` }).waitFor()
    await page.getByRole('button', { name: 'Create trust list' }).click()
    const form = dialog('Create trust list')
    await form.getByRole('textbox', { name: /^Id/ }).fill('federation')
    await form.getByText('OpenID Federation trust anchor', { exact: true }).click()
    await form.getByLabel(/^Trust anchor/).fill(ANCHOR)
    await form.getByLabel(/^Anchor keys/).fill('not json')
    await form.getByLabel(/^Required trust marks/).fill(MARK)
    await page.keyboard.press('Enter')
    await expectAccessible('create trust list dialog (OpenID Federation)')
    await form.getByRole('button', { name: 'Create' }).click()
    await expect.poll(() => errorOf(page, form.getByLabel(/^Anchor keys/))).not.toBe('')
    await expect(api.getTrustList('federation')).rejects.toMatchObject({ status: 404 })
    await form.getByLabel(/^Anchor keys/).fill(JSON.stringify(anchorJwks))
    await form.getByRole('button', { name: 'Create' }).click()
    await form.waitFor({ state: 'detached' })
    expect((await api.getTrustList('federation')).source).toStrictEqual({
      type: 'openid-federation',
      trustAnchor: ANCHOR,
      jwks: anchorJwks,
      requiredTrustMarkTypes: [MARK],
    })
    const row = page.getByRole('table', { name: 'Trust lists' }).getByRole('row').nth(1)
    await expect.poll(() => row.textContent()).toMatch(/^federationopenid-federation/)
    await expectAccessible('trust lists page with an openid-federation list')
  })

  it('shows the stored values when edited, and saves another anchor without the trust mark', async () => {
    await page.getByRole('button', { name: 'Edit federation' }).click()
    const form = dialog('Edit trust list federation')
    expect(await form.getByLabel(/^Trust anchor/).inputValue()).toBe(ANCHOR)
    expect(JSON.parse(await form.getByLabel(/^Anchor keys/).inputValue())).toStrictEqual(anchorJwks)
    await form.getByText(MARK, { exact: true }).waitFor()
    await expectAccessible('edit trust list dialog (OpenID Federation)')
    await form.getByLabel(/^Trust anchor/).fill(OTHER_ANCHOR)
    await form.getByLabel(/^Required trust marks/).focus()
    await page.keyboard.press('Backspace')
    await form.getByRole('button', { name: 'Save' }).click()
    await form.waitFor({ state: 'detached' })
    expect((await api.getTrustList('federation')).source).toStrictEqual({
      type: 'openid-federation',
      trustAnchor: OTHER_ANCHOR,
      jwks: anchorJwks,
    })
  })
})
