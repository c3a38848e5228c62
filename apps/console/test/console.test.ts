import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ServiceProcess } from '../../all-in-one/test/processes'
import {
  type ConsoleUnderTest,
  expectAccessible as expectAccessibleIn,
  signIn as signInAs,
  skipWithoutChromium,
  startConsole,
} from './browser'

/**
 * The admin console in a real browser (issue 22): Debian's Chromium (CHROMIUM_PATH) driven by
 * playwright-core, against an all-in-one process serving the console's test build. One browser,
 * one server and one page for the file: each case goes on from where the one before left off.
 */
const skip = skipWithoutChromium('console.test.ts')

describe.skipIf(skip)('admin console in Chromium', () => {
  const rootId = `root-${randomBytes(4).toString('hex')}`
  const rootSecret = randomBytes(24).toString('base64url')
  const tenant = `t-${randomBytes(4).toString('hex')}`
  const admin = { id: `${tenant}-admin`, secret: randomBytes(18).toString('base64url') }
  const offerer = { id: `${tenant}-offers`, secret: '' }
  let harness: ConsoleUnderTest
  let service: ServiceProcess
  let page: Page

  beforeAll(async () => {
    harness = await startConsole({ id: rootId, secret: rootSecret })
    ;({ service, page } = harness)
  }, 90_000)

  afterAll(() => harness?.stop())

  const url = (path: string) => `${service.origin}/console${path}`

  const expectAccessible = (what: string) => expectAccessibleIn(page, what)

  const signIn = (clientId: string, secret: string) => signInAs(page, clientId, secret)

  async function signOut() {
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
  }

  /** The error message of a field: what its aria-describedby names for assistive technology. */
  async function errorOf(field: Locator): Promise<string> {
    const described = (await field.getAttribute('aria-describedby')) ?? ''
    const id = described.split(' ').find((part) => part.endsWith('-error'))
    return id ? ((await page.locator(`[id="${id}"]`).textContent()) ?? '') : ''
  }

  const navigation = () => page.getByRole('navigation', { name: 'Console pages' })

  it('an operator signs in with client credentials and lands on the tenants', async () => {
    await page.goto(url('/'))
    await expectAccessible('sign-in page')
    await page.getByLabel('Client id').fill(rootId)
    await page.getByLabel('Client secret').fill('not-the-secret-0123')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toContain('The client id or secret is wrong')
    await signIn(rootId, rootSecret)
    await page.getByRole('heading', { name: 'Tenants' }).waitFor()
    expect(await navigation().getByRole('link').allTextContents()).toStrictEqual([
      'Tenants',
      'API clients',
      'Issuer branding',
      'Audit events',
      'Health and version',
    ])
    // Issue 22, issue 42: no token in the page's reach (the session cookie is HttpOnly).
    expect(page.url()).not.toContain('token')
    const stored = await page.evaluate(() => {
      const { document } = globalThis as unknown as { document: { cookie: string } }
      return [localStorage.length, sessionStorage.length, document.cookie]
    })
    expect(stored).toStrictEqual([0, 0, ''])
    await expectAccessible('tenants page')
  })

  it('the operator creates a tenant, which becomes the picked tenant', async () => {
    await page.getByRole('button', { name: 'Create tenant' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create tenant' })
    await dialog.getByLabel('Id', { exact: true }).fill(tenant)
    await dialog.getByLabel('Name').fill('Console test tenant')
    await expectAccessible('create tenant dialog')
    await dialog.getByRole('button', { name: 'Create tenant' }).click()
    await page.getByRole('cell', { name: tenant, exact: true }).waitFor()
    expect(await page.getByRole('combobox', { name: 'Tenant' }).inputValue()).toContain(tenant)
  })

  it('a problem shows on the field it names by the API’s schema; one the API finds, above the button', async () => {
    await navigation().getByRole('link', { name: 'API clients' }).click()
    await page.getByRole('heading', { name: `API clients of ${tenant}` }).waitFor()
    await page.getByRole('button', { name: 'Create client' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create client' })
    // Spec §5 rule 3 (core-domain grantableRoles): a tenant's client is not offered tenant:manage.
    await dialog.getByRole('checkbox', { name: 'tenant:admin' }).waitFor()
    expect(await dialog.getByRole('checkbox', { name: 'tenant:manage' }).count()).toBe(0)
    // zClientCreate in the browser: a secret shorter than 16 characters never leaves it.
    await dialog.getByLabel('Client secret').fill('short')
    await dialog.getByRole('checkbox', { name: 'key:read' }).check()
    await dialog.getByRole('button', { name: 'Create client' }).click()
    await expect.poll(() => errorOf(dialog.getByLabel('Client secret'))).toMatch(/16/)
    // Only the API knows the taken id (409): a problem of no field, above the button.
    await dialog.getByLabel('Client secret').fill('')
    await dialog.getByLabel('Client id').fill(rootId)
    await dialog.getByRole('button', { name: 'Create client' }).click()
    await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('already taken')
    await expectAccessible('create client dialog with problems')
    await dialog.getByRole('checkbox', { name: 'key:read' }).uncheck()
    // The tenant's administrator, with the key roles.
    await dialog.getByLabel('Client id').fill(admin.id)
    await dialog.getByLabel('Client secret').fill(admin.secret)
    for (const role of ['tenant:admin', 'key:manage'])
      await dialog.getByRole('checkbox', { name: role }).check()
    await dialog.getByRole('button', { name: 'Create client' }).click()
    const secret = page.getByRole('dialog', { name: 'Client secret' })
    expect(await secret.getByTestId('client-secret').textContent()).toBe(admin.secret)
    await secret.getByRole('button', { name: 'I have stored it' }).click()
    await page.getByRole('cell', { name: admin.id, exact: true }).waitFor()
  })

  it('a tenant admin creates a client and sees its secret once', async () => {
    await signOut()
    await signIn(admin.id, admin.secret)
    // Issue 42 item 3: grouped, Keys before Administration.
    expect(await navigation().getByRole('link').allTextContents()).toStrictEqual([
      'Key chains',
      'API clients',
      'Issuer branding',
      'Audit events',
      'Health and version',
    ])
    await navigation().getByRole('link', { name: 'API clients' }).click()
    await page.getByRole('button', { name: 'Create client' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create client' })
    await dialog.getByLabel('Client id').fill(offerer.id)
    await dialog.getByRole('checkbox', { name: 'issuance:offer' }).check()
    await dialog.getByRole('button', { name: 'Create client' }).click()
    const shown = page.getByRole('dialog', { name: 'Client secret' })
    offerer.secret = (await shown.getByTestId('client-secret').textContent()) ?? ''
    expect(offerer.secret.length).toBeGreaterThanOrEqual(16)
    await expectAccessible('client secret dialog')
    await shown.getByRole('button', { name: 'I have stored it' }).click()
    await shown.waitFor({ state: 'hidden' })
    await page.getByRole('cell', { name: offerer.id, exact: true }).waitFor()
    // Once: nowhere on the page after the dialog closed.
    expect(await page.content()).not.toContain(offerer.secret)
    await expectAccessible('clients page')
  })

  it('the tenant admin generates a key chain and reads its certificate chain', async () => {
    await navigation().getByRole('link', { name: 'Key chains' }).click()
    await page.getByText('No key chain yet.').waitFor()
    await expectAccessible('key chains page')
    await page.getByRole('button', { name: 'Generate key chain' }).click()
    const dialog = page.getByRole('dialog', { name: 'Generate key chain' })
    await dialog.getByLabel('Id', { exact: true }).fill('signing')
    await dialog.getByLabel('Subject').fill('CN=Console Test Issuer,O=ACME')
    await dialog.getByLabel('Country').fill('DE')
    await dialog.getByRole('button', { name: 'Generate key chain' }).click()
    await page.getByRole('heading', { name: 'Key chain signing', exact: true }).waitFor()
    const leaf = page
      .getByRole('region', { name: 'Certificate chain of the active key' })
      .getByTestId('certificate')
    await leaf.first().waitFor()
    const leafText = (await leaf.first().textContent()) ?? ''
    expect(leafText).toContain('CN=Console Test Issuer')
    expect(leafText).toContain('C=DE')
    expect(leafText).toContain(`URI:${service.origin}/issuers/${tenant}`)
    const root = page.getByRole('region', { name: /^Root certificate/ }).getByTestId('certificate')
    expect(await root.textContent()).toContain('CA: yes')
    await expectAccessible('key chain page')

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download root certificate' }).click(),
    ])
    expect(download.suggestedFilename()).toBe('signing-root.pem')
    const pem = readFileSync((await download.path()) as string, 'utf8')
    expect(pem).toMatch(/^-----BEGIN CERTIFICATE-----\n/)

    // Rotate (confirmed): the old key stays published as the previous key.
    const before = (await page.getByText(/^Key id/).textContent()) ?? ''
    await page.getByRole('button', { name: 'Rotate now' }).click()
    await page
      .getByRole('dialog', { name: 'Rotate key chain signing?' })
      .getByRole('button', { name: 'Rotate now' })
      .click()
    await page.getByRole('heading', { name: /^Previous key/ }).waitFor()
    expect(await page.getByText(/^Key id/).textContent()).not.toBe(before)
  })

  it('deleting a key chain asks first, and Cancel keeps it', async () => {
    await page.getByRole('button', { name: 'Delete' }).click()
    const confirm = page.getByRole('dialog', { name: 'Delete key chain signing?' })
    await expectAccessible('delete confirmation')
    await confirm.getByRole('button', { name: 'Cancel' }).click()
    await confirm.waitFor({ state: 'hidden' })
    await page.getByRole('heading', { name: 'Key chain signing', exact: true }).waitFor()
    await page.getByRole('button', { name: 'Delete' }).click()
    await confirm.getByRole('button', { name: 'Delete' }).click()
    await page.getByRole('heading', { name: `Key chains of ${tenant}` }).waitFor()
    await page.getByText('No key chain yet.').waitFor()
  })

  it('health and version', async () => {
    await navigation().getByRole('link', { name: 'Health and version' }).click()
    expect(await page.getByTestId('service-version').textContent()).toMatch(/^\d+\.\d+\.\d+/)
    await expectAccessible('health page')
  })

  it('a client with only issuance:offer sees no key chains, and their URL says why', async () => {
    await signOut()
    await signIn(offerer.id, offerer.secret)
    // Its role's pages: offers, sessions, status lists (apps/console/test/flows.test.ts tests them).
    expect(await navigation().getByRole('link').allTextContents()).toStrictEqual([
      'Dashboard',
      'Sessions',
      'Offers',
      'Status lists',
      'Health and version',
    ])
    // Typed into the address bar: a new page load, still signed in (issue 42: the service's session).
    await page.goto(url('/key-chains'))
    const forbidden = page.getByTestId('forbidden')
    expect(await forbidden.textContent()).toContain('one of the roles key:manage, key:read')
    expect(page.url()).toBe(url('/key-chains'))
    await expectAccessible('forbidden page')
  })

  it('issue 22: no page broke the Content-Security-Policy', () => {
    expect(harness.policyViolations).toStrictEqual([])
  })

  it('issue 22, issue 23 item 4: Swagger UI at /api/docs renders in Chromium and "Try it out" calls the origin it was opened on', async () => {
    // Opened on another origin than PUBLIC_URL (the process's own): an absolute server would
    // send "Try it out" there instead.
    const opened = service.origin.replace('127.0.0.1', 'localhost')
    await page.goto(`${opened}/api/docs/`)
    await page.locator('.opblock').first().waitFor()
    // A public operation, tried from this origin (the description's server is relative).
    // Swagger UI ids an operation block `operations-<tag>-<operationId>` (paths carry zero-width breaks).
    const health = page.locator('#operations-health-getHealth')
    await health.locator('.opblock-summary').click()
    await health.getByRole('button', { name: 'Try it out' }).click()
    await health.getByRole('button', { name: 'Execute' }).click()
    await expect.poll(() => health.locator('.request-url pre').textContent()).toBe(`${opened}/api/health`)
    await expect
      .poll(() =>
        health.locator('.live-responses-table .response .response-col_status').first().textContent(),
      )
      .toContain('200')
  })
})
