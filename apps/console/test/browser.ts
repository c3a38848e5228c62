import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TEST_MASTER_SECRET } from '@credential-service/db-schema/testing'
import { createManagementClient, type ManagementClient } from '@credential-service/sdk'
import axe from 'axe-core'
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core'
import { expect } from 'vitest'
import { TEST_CONSOLE_DIR } from '../../../scripts/test-bundles'
import { type ServiceProcess, startProcess } from '../../all-in-one/test/processes'

/** Debian's Chromium (CHROMIUM_PATH), driven by playwright-core. */
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const missing = !existsSync(CHROMIUM)

/** In CI a missing browser fails the file (startConsole); elsewhere it is skipped, saying why. */
export function skipWithoutChromium(file: string): boolean {
  const skip = missing && !process.env.CI
  if (skip)
    console.warn(`${file} skipped: no Chromium at ${CHROMIUM} (install chromium or set CHROMIUM_PATH)`)
  return skip
}

export interface ConsoleUnderTest {
  service: ServiceProcess
  browser: Browser
  /** The page's context: more tabs of the same browser profile (its cookies) open in it. */
  context: BrowserContext
  page: Page
  /** The page's Content-Security-Policy reports, with the URL they came from. */
  policyViolations: string[]
  url(path: string): string
  stop(): Promise<void>
}

/**
 * An all-in-one process serving the console's test build, with the operator `root` (and `env`),
 * and one Chromium page: one browser and one server per test file.
 */
export async function startConsole(
  root: { id: string; secret: string },
  env: Record<string, string> = {},
): Promise<ConsoleUnderTest> {
  if (missing)
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`,
    )
  const dataDir = mkdtempSync(join(tmpdir(), 'console-test-'))
  const [service, browser] = await Promise.all([
    startProcess('all-in-one', {
      DATA_DIR: dataDir,
      AUTH_CLIENT_ID: root.id,
      AUTH_CLIENT_SECRET: root.secret,
      // The shared PostgreSQL test database was set up with the suite's secret.
      MASTER_SECRET: TEST_MASTER_SECRET,
      CONSOLE_DIR: TEST_CONSOLE_DIR,
      ...(process.env.TEST_DATABASE_URL ? { DATABASE_URL: process.env.TEST_DATABASE_URL } : {}),
      ...env,
    }),
    chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // Chromium's sandbox needs user namespaces, which root in a container does not get.
      args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    }),
  ])
  expect(await service.ready(), service.stderr()).toBe(200)
  // Dialogs then open and close at once (the theme's respectReducedMotion): no check runs on
  // a dialog half faded out.
  // A context of its own rather than browser.newPage(), whose context refuses a second page.
  const context = await browser.newContext({ reducedMotion: 'reduce' })
  const page = await context.newPage()
  // A step that does not happen fails before the test's own timeout; 20 s leaves room for a
  // loaded two-core CI machine, where a first page load and its lazy chunks took over 10 s.
  page.setDefaultTimeout(20_000)
  const policyViolations: string[] = []
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy'))
      policyViolations.push(`${page.url()}: ${message.text()} ${JSON.stringify(message.location())}`)
  })
  return {
    service,
    browser,
    context,
    page,
    policyViolations,
    url: (path) => `${service.origin}/console${path}`,
    async stop() {
      await browser.close()
      await service.stop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** axe-core in the page (evaluated over the DevTools protocol, which the page's CSP allows). */
export async function expectAccessible(page: Page, what: string) {
  // The page at rest: a link the pointer still hovers after its click is drawn in its hover colours.
  await page.mouse.move(0, 0)
  // A dialog names itself (aria-labelledby) once its title has mounted, an effect after its first
  // render: axe run in between reports aria-dialog-name for a frame no reader sees.
  await page.waitForFunction(() => {
    const { document } = globalThis as unknown as {
      document: { querySelector(selector: string): { hasAttribute(name: string): boolean } | null }
    }
    const dialog = document.querySelector('[role="dialog"]')
    return !dialog || dialog.hasAttribute('aria-labelledby') || dialog.hasAttribute('aria-label')
  })
  // Once per page load (the console routes without loading again).
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(axe.source)
  const violations = await page.evaluate(async () => {
    // The page's globals: this file is typechecked for Node, without the DOM's. With a dialog
    // open (aria-modal), the page behind it is inert: the dialog is what is checked.
    const page = globalThis as unknown as {
      axe: typeof axe
      document: { querySelector(selector: string): unknown }
    }
    const dialog = page.document.querySelector('[role="dialog"]') as axe.ElementContext | null
    const results = await page.axe.run(dialog ?? (page.document as axe.ElementContext))
    // Landmark rules at every impact (a dialog's title bar once made a second banner, moderate).
    return results.violations
      .filter(
        (violation) =>
          violation.impact === 'serious' ||
          violation.impact === 'critical' ||
          violation.id.startsWith('landmark-'),
      )
      .map(
        (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
      )
  })
  expect(violations, what).toStrictEqual([])
}

/**
 * Another tab of the profile of `context` at `url`. `deaf`: the tab hears nothing from the
 * others (no BroadcastChannel in it), so only its own next call to the service can tell it
 * that the session ended elsewhere.
 */
export async function openTab(context: BrowserContext, url: string, options: { deaf?: boolean } = {}) {
  const tab = await context.newPage()
  tab.setDefaultTimeout(20_000)
  if (options.deaf)
    await tab.addInitScript(() => {
      delete (globalThis as { BroadcastChannel?: unknown }).BroadcastChannel
    })
  await tab.goto(url)
  return tab
}

/** Signs in as the client; a session the browser still has (issue 42) is signed out first. */
export async function signIn(page: Page, clientId: string, secret: string) {
  const signOut = page.getByRole('button', { name: 'Sign out' })
  const form = page.getByLabel('Client id')
  await form.or(signOut).first().waitFor()
  if (await signOut.isVisible()) {
    await signOut.click()
    await form.waitFor()
  }
  await page.getByLabel('Client id').fill(clientId)
  await page.getByLabel('Client secret').fill(secret)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
}

/** The error message of a field: what its aria-describedby names for assistive technology. */
export async function errorOf(page: Page, field: Locator): Promise<string> {
  const described = (await field.getAttribute('aria-describedby')) ?? ''
  const id = described.split(' ').find((part) => part.endsWith('-error'))
  return id ? ((await page.locator(`[id="${id}"]`).textContent()) ?? '') : ''
}

/**
 * A new tenant with one client of `roles`, made by the operator `root`; answers the client's
 * management API (the state a test checks the console's work against).
 */
export async function tenantClient(
  harness: ConsoleUnderTest,
  root: { id: string; secret: string },
  tenant: string,
  client: { id: string; secret: string },
  roles: Parameters<ManagementClient['createClientOfTenant']>[1]['roles'],
): Promise<ManagementClient> {
  const baseUrl = harness.service.origin
  const operator = createManagementClient({ baseUrl, clientId: root.id, clientSecret: root.secret })
  await operator.createTenant({ id: tenant, name: tenant })
  await operator.createClientOfTenant(tenant, { clientId: client.id, clientSecret: client.secret, roles })
  return createManagementClient({ baseUrl, clientId: client.id, clientSecret: client.secret })
}

/** Closes dialogs a failed case left open, so the next case gets its page. */
export async function closeDialogs(page: Page) {
  for (let i = 0; i < 3 && (await page.getByRole('dialog').count()) > 0; i++)
    await page.keyboard.press('Escape')
}
