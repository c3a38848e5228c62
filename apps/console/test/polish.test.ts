import { randomBytes } from 'node:crypto'
import { ROLES } from '@credential-service/core-domain'
import { createManagementClient, type ManagementClient } from '@credential-service/sdk'
import type { Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PAGE_KEYS, PAGES } from '../src/access'
import {
  type ConsoleUnderTest,
  expectAccessible as expectAccessibleIn,
  signIn,
  skipWithoutChromium,
  startConsole,
} from './browser'

/**
 * Issue 42 item 3, console polish, in Chromium with axe: the dashboard, grouped navigation,
 * breadcrumbs, the skip link, toasts, search, first-field focus, the offer without claims, the
 * role picker and the session timeline. One browser and one server for the file.
 */
const skip = skipWithoutChromium('polish.test.ts')

describe.skipIf(skip)('console polish in Chromium (issue 42 item 3)', () => {
  const root = { id: `root-${randomBytes(4).toString('hex')}`, secret: randomBytes(24).toString('base64url') }
  const tenant = `p-${randomBytes(4).toString('hex')}`
  const admin = { id: `${tenant}-admin`, secret: randomBytes(18).toString('base64url') }
  let harness: ConsoleUnderTest
  let page: Page
  let api: ManagementClient
  const offered: string[] = []

  beforeAll(async () => {
    harness = await startConsole(root)
    page = harness.page
    const operator = createManagementClient({
      baseUrl: harness.service.origin,
      clientId: root.id,
      clientSecret: root.secret,
    })
    await operator.createTenant({ id: tenant, name: 'Polish test tenant' })
    // Every role a tenant's client may hold: every tenant page shows.
    await operator.createClientOfTenant(tenant, {
      clientId: admin.id,
      clientSecret: admin.secret,
      roles: ROLES.filter((role) => role !== 'tenant:manage'),
    })
    api = createManagementClient({
      baseUrl: harness.service.origin,
      clientId: admin.id,
      clientSecret: admin.secret,
    })
    await api.createKeyChain({ source: 'generate', id: 'signing' })
    await api.createCredentialConfig({
      id: 'badge',
      config: { format: 'dc+sd-jwt', vct: 'urn:example:badge:1' },
      keyChainId: 'signing',
      fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
    })
    // Every field optional: the form may give no claim at all.
    await api.createCredentialConfig({
      id: 'note',
      config: { format: 'dc+sd-jwt', vct: 'urn:example:note:1' },
      keyChainId: 'signing',
      fields: [{ path: ['remark'], type: 'string' }],
    })
    for (const name of ['Erika', 'Max']) {
      const offer = await api.createOffer({
        credentialConfigurationIds: ['badge'],
        claims: { badge: { given_name: name } },
      })
      offered.push(offer.sessionId)
    }
  }, 120_000)

  afterAll(() => harness?.stop())

  const expectAccessible = (what: string) => expectAccessibleIn(page, what)
  const navigation = () => page.getByRole('navigation', { name: 'Console pages' })
  const breadcrumb = () => page.getByRole('navigation', { name: 'Breadcrumb' })
  const isFocused = (locator: Locator) =>
    locator.evaluate(
      (element) => element === (element.ownerDocument as { activeElement: unknown }).activeElement,
    )
  const toast = (text: string) => page.getByRole('status').filter({ hasText: text })

  it('h: the first page after sign-in is the dashboard: issued / verified / failed per configuration, from the database', async () => {
    await page.goto(harness.url('/'))
    await signIn(page, admin.id, admin.secret)
    await page.getByRole('heading', { name: `Dashboard of ${tenant}` }).waitFor()
    expect(page.url()).toBe(harness.url('/dashboard'))
    const issuance = page.getByRole('table', { name: 'Issuance per credential configuration' })
    await issuance.waitFor()
    expect(await issuance.getByRole('row').allTextContents()).toStrictEqual([
      'ConfigurationOfferedIssuedFailedExpired',
      'badge2000',
    ])
    expect(await page.getByTestId('total-issued').textContent()).toBe('Issued0')
    await expectAccessible('dashboard')
  })

  it('a: the navigation in labelled groups, breadcrumbs group > page > item, a skip link to the main content', async () => {
    const groups = await navigation()
      .getByRole('group')
      .evaluateAll((elements) =>
        elements.map((element) => {
          const id = element.getAttribute('aria-labelledby') ?? ''
          return (
            element.ownerDocument as { getElementById(id: string): { textContent: string } | null }
          ).getElementById(id)?.textContent
        }),
      )
    expect(groups).toStrictEqual([
      'Overview',
      'Issuance',
      'Presentation',
      'Trust',
      'Keys',
      'Integrations',
      'Administration',
    ])
    expect(
      await navigation().getByRole('group', { name: 'Keys' }).getByRole('link').allTextContents(),
    ).toStrictEqual(['Key chains'])
    expect(await breadcrumb().textContent()).toBe('Overview>Dashboard')

    // The first Tab reaches the skip link; following it puts the focus on the main content.
    await page.keyboard.press('Tab')
    const skipLink = page.getByRole('link', { name: 'Skip to main content' })
    expect(await isFocused(skipLink)).toBe(true)
    await expectAccessible('skip link shown')
    await page.keyboard.press('Enter')
    await expect.poll(() => isFocused(page.locator('#main'))).toBe(true)

    await page.goto(harness.url(`/sessions/${offered[0]}`))
    await page.getByRole('heading', { name: `Session ${offered[0]}` }).waitFor()
    expect(await breadcrumb().textContent()).toBe(`Overview>Sessions>${offered[0]}`)
    await breadcrumb().getByRole('link', { name: 'Sessions' }).click()
    await page.getByRole('heading', { name: `Sessions of ${tenant}` }).waitFor()
  })

  it('c: the sessions list searches the loaded page as you type, beside the API filters', async () => {
    const rows = () => page.getByRole('table', { name: 'Sessions' }).getByRole('row')
    await expect.poll(() => rows().count()).toBe(3)
    await page
      .getByRole('form', { name: 'Filter sessions' })
      .getByLabel('Search')
      .fill(offered[1] as string)
    await expect.poll(() => rows().count()).toBe(2)
    await expectAccessible('sessions with a search')
  })

  it('g: the session timeline: the record and the audit log in time order', async () => {
    const id = offered[0] as string
    await page.goto(harness.url(`/sessions/${id}`))
    const timeline = page.getByRole('table', { name: 'Timeline' })
    await timeline.waitFor()
    await expect
      .poll(() => timeline.getByRole('row').nth(1).textContent())
      .toContain(`Offer created by ${admin.id}`)
    await expectAccessible('session detail with its timeline')
  })

  it('d, f, b: a dialog opens with its first field focused; the role picker offers what the API accepts; a create ends with a toast', async () => {
    await navigation().getByRole('link', { name: 'API clients' }).click()
    await page.getByRole('button', { name: 'Create client' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create client' })
    const first = dialog.getByRole('textbox', { name: /^Client id/ })
    const firstId = await first.getAttribute('id')
    await expect
      .poll(() =>
        page.evaluate(
          () =>
            (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document
              .activeElement?.id,
        ),
      )
      .toBe(firstId)
    // Spec §5 rule 3, as the API applies it (core-domain grantableRoles): no tenant:manage here.
    const roles = dialog.getByRole('group', { name: 'Roles' }).getByRole('checkbox')
    const names = await roles.evaluateAll((boxes) => boxes.map((box) => (box as { value?: string }).value))
    expect(names).toStrictEqual(ROLES.filter((role) => role !== 'tenant:manage'))
    await expectAccessible('create client dialog, first field focused')
    await dialog.getByRole('checkbox', { name: 'key:read' }).check()
    await dialog.getByRole('button', { name: 'Create client' }).click()
    await toast('Client created').waitFor()
    const secret = page.getByRole('dialog', { name: 'Client secret' })
    await secret.getByRole('button', { name: 'I have stored it' }).click()
    await secret.waitFor({ state: 'hidden' })
  })

  it('e: an offer the form gives no claims for asks first; created anyway, a toast', async () => {
    await navigation().getByRole('link', { name: 'Offers' }).click()
    // A required input's label ends in an asterisk.
    await page
      .getByLabel(/^Credential configurations( \*)?$/)
      .first()
      .click()
    await page.getByRole('option', { name: 'note (dc+sd-jwt)', exact: true }).click()
    await page.keyboard.press('Escape')
    await page.getByRole('group', { name: 'Claims of note' }).waitFor()
    await page.getByRole('button', { name: 'Create offer' }).click()
    const warning = page.getByRole('alert').filter({ hasText: 'No claims in this offer' })
    await warning.waitFor()
    expect(await warning.textContent()).toContain('The form gives no claim for note')
    await expectAccessible('offer without claims warning')
    await warning.getByRole('button', { name: 'Create without claims' }).click()
    await toast('Offer created').waitFor()
    await page.getByTestId('session-status').first().waitFor()
  })

  it('b: a delete ends with a success toast', async () => {
    const id = offered[1] as string
    await page.goto(harness.url(`/sessions/${id}`))
    await page.getByRole('button', { name: 'Delete' }).click()
    await page
      .getByRole('dialog', { name: `Delete session ${id}?` })
      .getByRole('button', { name: 'Delete' })
      .click()
    await toast(`Delete session ${id}: done`).waitFor()
    await page.getByRole('heading', { name: `Sessions of ${tenant}` }).waitFor()
  })

  it('a: every page of the navigation passes axe (no critical or serious violation)', async () => {
    for (const key of PAGE_KEYS) {
      await navigation().getByRole('link', { name: PAGES[key].label, exact: true }).click()
      await page.getByRole('heading', { level: 1 }).first().waitFor()
      await page.waitForLoadState('networkidle')
      await expectAccessible(`${PAGES[key].label} page`)
    }
  }, 180_000)

  it('no page broke the Content-Security-Policy', () => {
    expect(harness.policyViolations).toStrictEqual([])
  })
})
