import { randomBytes } from 'node:crypto'
import { createManagementClient, type ManagementClient } from '@credential-service/sdk'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { presentOverHttp, redeemOffer } from '../../all-in-one/test/wallet'
import {
  type ConsoleUnderTest,
  expectAccessible as expectAccessibleIn,
  signIn as signInAs,
  skipWithoutChromium,
  startConsole,
} from './browser'

/**
 * The console's flow pages in Chromium (issue 22): offers, presentation requests, sessions and
 * status lists against an all-in-one process, with the repository's test wallet on the other side.
 * The tenant, its key chain and configurations are set up through the SDK (the configuration
 * editors have tests of their own). One browser, one server, one page: each case goes on from
 * where the one before left off.
 */
const skip = skipWithoutChromium('flows.test.ts')
const VCT = 'urn:example:console:pid:1'

describe.skipIf(skip)('console flows in Chromium: offers, presentations, sessions, status lists', () => {
  const rootId = `root-${randomBytes(4).toString('hex')}`
  const rootSecret = randomBytes(24).toString('base64url')
  const tenant = `t-${randomBytes(4).toString('hex')}`
  const officer = { id: `${tenant}-officer`, secret: randomBytes(18).toString('base64url') }
  const offerer = { id: `${tenant}-offerer`, secret: randomBytes(18).toString('base64url') }
  let harness: ConsoleUnderTest
  let page: Page
  /** The credential the test wallet got from the page's offer. */
  let issued: Awaited<ReturnType<typeof redeemOffer>>
  let issuanceSession = ''

  beforeAll(async () => {
    harness = await startConsole(
      { id: rootId, secret: rootSecret },
      {
        // Our verifier fetches our own status lists over plain http, uncached: a revocation
        // shows at the next presentation.
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
        STATUS_LIST_CACHE_MAX_SECONDS: '0',
      },
    )
    page = harness.page
    await setUpTenant(harness.service.origin)
  }, 90_000)

  afterAll(() => harness?.stop())

  /** Through the SDK, as an integrator would: the tenant, a client for the pages, keys, configurations. */
  async function setUpTenant(origin: string) {
    const root = createManagementClient({ baseUrl: origin, clientId: rootId, clientSecret: rootSecret })
    await root.createTenant({ id: tenant, name: tenant })
    await root.createClientOfTenant(tenant, {
      clientId: officer.id,
      clientSecret: officer.secret,
      roles: [
        'key:manage',
        'issuance:config',
        'issuance:offer',
        'presentation:config',
        'presentation:request',
      ],
    })
    await root.createClientOfTenant(tenant, {
      clientId: offerer.id,
      clientSecret: offerer.secret,
      roles: ['issuance:offer'],
    })
    const api: ManagementClient = createManagementClient({
      baseUrl: origin,
      clientId: officer.id,
      clientSecret: officer.secret,
    })
    await api.createKeyChain({
      source: 'generate',
      id: 'keys',
      certificate: { mode: 'internal-ca', subject: `CN=${tenant},C=DE` },
    })
    await api.createCredentialConfig({
      id: 'pid',
      config: { format: 'dc+sd-jwt', vct: VCT },
      keyChainId: 'keys',
      statusManagement: true,
      fields: [
        {
          path: ['given_name'],
          type: 'string',
          mandatory: true,
          disclosable: true,
          display: [{ name: 'Given name', locale: 'en' }],
        },
        { path: ['birthdate'], type: 'date', disclosable: true },
        { path: ['age_over_18'], type: 'boolean', disclosable: true },
      ],
    })
    await api.createPresentationConfig({
      id: 'ask',
      keyChainId: 'keys',
      responseMode: 'direct_post',
      dcqlQuery: {
        credentials: [
          {
            id: 'pid',
            format: 'dc+sd-jwt',
            meta: { vct_values: [VCT] },
            claims: [{ path: ['given_name'] }, { path: ['age_over_18'], values: [true] }],
          },
        ],
      },
    })
  }

  const url = (path: string) => harness.url(path)
  const navigation = () => page.getByRole('navigation', { name: 'Console pages' })
  const status = () => page.getByRole('status').getByTestId('session-status')

  const expectAccessible = (what: string) => expectAccessibleIn(page, what)

  /** Picks an option of a Mantine Select or MultiSelect by its visible label. */
  async function pick(label: string, option: string) {
    // A required input's label ends in an asterisk.
    const escaped = label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    await page
      .getByLabel(new RegExp(`^${escaped}( \\*)?$`))
      .first()
      .click()
    await page.getByRole('option', { name: option, exact: true }).click()
  }

  /** The URI the page shows for the wallet (the same-device link). */
  const walletUri = async () => (await page.getByTestId('same-device-link').getAttribute('href')) ?? ''

  /** The wallet presents the issued credential to the page's presentation request. */
  async function presentToPage() {
    const requestUri = new URL(await walletUri()).searchParams.get('request_uri') ?? ''
    const response = await presentOverHttp({
      requestUri,
      credentialQueryId: 'pid',
      credential: issued.credential,
      holder: issued.holder,
      disclose: { given_name: true, age_over_18: true },
    })
    await response.body?.cancel()
  }

  const signIn = (client: { id: string; secret: string }) => signInAs(page, client.id, client.secret)

  it('signs in and sees the flow pages its roles allow', async () => {
    await page.goto(url('/offers'))
    await signIn(officer)
    await page.getByRole('heading', { name: `Offers of ${tenant}` }).waitFor()
    const links = await navigation().getByRole('link').allTextContents()
    for (const label of ['Offers', 'Presentation requests', 'Sessions', 'Status lists'])
      expect(links).toContain(label)
    await expectAccessible('offers page')
  })

  it('OpenID4VCI §4.1: an offer from the claims form of the fields; QR code and link; the wallet redeems it and the page sees completed', async () => {
    await pick('Credential configurations', 'pid (dc+sd-jwt)')
    const claims = page.getByRole('group', { name: 'Claims of pid' })
    await claims.getByLabel('Given name (given_name)').waitFor()
    // The mandatory field, checked in the browser before anything is sent.
    await page.getByRole('button', { name: 'Create offer' }).click()
    await expect
      .poll(() => claims.getByLabel('Given name (given_name)').getAttribute('aria-invalid'))
      .toBe('true')
    expect(await claims.textContent()).toContain('Required by the configuration')
    await claims.getByLabel('Given name (given_name)').fill('Erika')
    await claims.getByLabel('birthdate').fill('1984-01-26')
    await pick('age_over_18', 'Yes (true)')
    await page.getByLabel('Status handle').fill(`case-${tenant}`)
    // The page follows the session's event stream (issue 23 item 2), not only polls.
    const streamed = page.waitForResponse((response) => /\/sessions\/ses_[^/]+\/events$/.test(response.url()))
    await page.getByRole('button', { name: 'Create offer' }).click()

    await page.getByRole('img', { name: /^QR code of the offer/ }).waitFor()
    const offerUri = await walletUri()
    expect(offerUri).toMatch(/^openid-credential-offer:\/\/\?credential_offer_uri=/)
    expect(await status().textContent()).toBe('offered')
    await expectAccessible('offer made')

    const credentialOffer = (await (
      await fetch(new URL(offerUri).searchParams.get('credential_offer_uri') ?? '')
    ).json()) as Record<string, unknown>
    issued = await redeemOffer({ credentialOffer, configurationId: 'pid' })
    await expect.poll(() => status().textContent(), { timeout: 10_000 }).toBe('completed')
    expect((await streamed).headers()['content-type']).toBe('text/event-stream; charset=utf-8')
    issuanceSession = (await page.getByRole('heading', { name: /^Offer ses_/ }).textContent())?.slice(6) ?? ''
    expect(issuanceSession).toMatch(/^ses_/)
  })

  it('OpenID4VCI §5.1.1: a tx_code is asked for and shown once', async () => {
    await page.getByLabel('Require a transaction code (tx_code), sent to the holder another way').check()
    await page.getByRole('button', { name: 'Create offer' }).click()
    await expect.poll(() => page.getByTestId('tx-code').textContent()).toMatch(/^\d{6}$/)
    await expectAccessible('offer with tx_code')
  })

  it('OpenID4VP: a presentation request; the wallet presents; the page shows the disclosed claims', async () => {
    await navigation().getByRole('link', { name: 'Presentation requests' }).click()
    await page.getByRole('heading', { name: `Presentation requests of ${tenant}` }).waitFor()
    await expectAccessible('presentation requests page')
    await pick('Presentation configuration', 'ask')
    await page.getByRole('button', { name: 'Create presentation request' }).click()
    await page.getByRole('img', { name: /^QR code of the presentation request/ }).waitFor()
    expect(await walletUri()).toMatch(/^openid4vp:\/\/\?/)
    expect(await status().textContent()).toBe('pending')
    await presentToPage()
    await expect.poll(() => status().textContent(), { timeout: 10_000 }).toBe('verified')
    const disclosed = page.getByTestId('disclosed-claims')
    await disclosed.waitFor()
    const rows = await disclosed.getByRole('row').allTextContents()
    expect(rows).toContain('given_nameErika')
    expect(rows).toContain('age_over_18true')
    await expectAccessible('verified presentation')
  })

  it('TSL: the credential revoked by its session in the page (confirmed); the next presentation is refused', async () => {
    await navigation().getByRole('link', { name: 'Status lists' }).click()
    await page.getByRole('heading', { name: `Status lists of ${tenant}` }).waitFor()
    await page.getByRole('row').filter({ hasText: 'keys' }).first().waitFor()
    await expectAccessible('status lists page')
    // By the offer's status handle: suspended, then reinstated (each confirmed).
    await page.getByText('By status handle').click()
    await page.getByRole('textbox', { name: 'Status handle' }).fill(`case-${tenant}`)
    for (const [action, status] of [
      ['Suspend', 'suspended'],
      ['Reinstate', 'valid'],
    ] as const) {
      await page.getByRole('button', { name: action }).click()
      await page
        .getByRole('dialog', { name: `${action} the credentials of handle case-${tenant}?` })
        .getByRole('button', { name: action })
        .click()
      await expect
        .poll(() => page.getByTestId('status-result').textContent())
        .toContain(`1 changed to ${status}`)
    }
    await page.getByText('By issuance session').click()
    await page.getByRole('textbox', { name: 'Session id' }).fill(issuanceSession)
    await page.getByRole('button', { name: 'Revoke' }).click()
    const confirm = page.getByRole('dialog', {
      name: `Revoke the credentials of session ${issuanceSession}?`,
    })
    await expectAccessible('revoke confirmation')
    await confirm.getByRole('button', { name: 'Revoke' }).click()
    expect(await page.getByTestId('status-result').textContent()).toContain('1 changed to revoked')

    await navigation().getByRole('link', { name: 'Presentation requests' }).click()
    await pick('Presentation configuration', 'ask')
    await page.getByRole('button', { name: 'Create presentation request' }).click()
    await page.getByRole('img', { name: /^QR code of the presentation request/ }).waitFor()
    await presentToPage()
    await expect.poll(() => status().textContent(), { timeout: 10_000 }).toBe('failed')
    expect(await page.getByText('the credential is revoked').count()).toBeGreaterThan(0)
    expect(await page.getByTestId('disclosed-claims').count()).toBe(0)
  })

  it('sessions: filtered by the API, read, deleted with confirmation', async () => {
    await navigation().getByRole('link', { name: 'Sessions' }).click()
    await page.getByRole('heading', { name: `Sessions of ${tenant}` }).waitFor()
    const sessions = page.getByRole('table', { name: 'Sessions' })
    await expect.poll(() => sessions.getByRole('row').count()).toBe(5)
    await expectAccessible('sessions page')
    await pick('Kind', 'presentation')
    await pick('Status', 'failed')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    await expect.poll(() => sessions.getByRole('row').count()).toBe(2)
    const failed = (await sessions.getByRole('link').textContent()) ?? ''
    await sessions.getByRole('link').click()
    await page.getByRole('heading', { name: `Session ${failed}` }).waitFor()
    expect(await page.getByRole('table', { name: 'Session' }).textContent()).toContain(
      'the credential is revoked',
    )
    await expectAccessible('session page')
    await page.getByRole('button', { name: 'Delete' }).click()
    await page
      .getByRole('dialog', { name: `Delete session ${failed}?` })
      .getByRole('button', { name: 'Delete' })
      .click()
    await page.getByRole('heading', { name: `Sessions of ${tenant}` }).waitFor()
    await expect.poll(() => sessions.getByRole('row').count()).toBe(4)
    expect(await sessions.textContent()).not.toContain(failed)
  })

  it('a client with issuance:offer alone: the claims form from the claims JSON Schema; issuance sessions only', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click()
    await signIn(offerer)
    await page.getByRole('heading', { name: `Sessions of ${tenant}` }).waitFor()
    expect(await navigation().getByRole('link').allTextContents()).toStrictEqual([
      'Dashboard',
      'Sessions',
      'Offers',
      'Status lists',
      'Health and version',
    ])
    const kinds = await page.getByRole('table', { name: 'Sessions' }).getByRole('row').allTextContents()
    expect(kinds.slice(1).every((row) => row.includes('issuance'))).toBe(true)
    await navigation().getByRole('link', { name: 'Offers' }).click()
    const configurations = page.getByLabel(/^Credential configurations/).first()
    await configurations.fill('pid')
    await configurations.press('Enter')
    const claims = page.getByRole('group', { name: 'Claims of pid' })
    await claims.getByLabel('given_name').fill('Ada')
    await pick('age_over_18', 'Yes (true)')
    await page.getByRole('button', { name: 'Create offer' }).click()
    await page.getByRole('img', { name: /^QR code of the offer/ }).waitFor()
    expect(await status().textContent()).toBe('offered')
    await expectAccessible('offer of a client with issuance:offer alone')
  })

  it('issue 22: no page broke the Content-Security-Policy', () => {
    expect(harness.policyViolations).toStrictEqual([])
  })
})
