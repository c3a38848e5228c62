import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import axe from 'axe-core'
import { type Browser, chromium, type Page } from 'playwright-core'
import { expect } from 'vitest'
import { type ServiceProcess, startProcess } from '../../all-in-one/test/processes'

/** Debian's Chromium, or CHROMIUM_PATH; a file is skipped without one, except in CI (issue 22). */
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
export const chromiumMissing = !existsSync(CHROMIUM)
export const skipBrowser = chromiumMissing && !process.env.CI

export interface ConsoleBrowser {
  service: ServiceProcess
  browser: Browser
  page: Page
  root: { id: string; secret: string }
  /** `Content Security Policy` messages the page logged. */
  policyViolations: string[]
  url(path: string): string
  close(): Promise<void>
}

/**
 * One all-in-one process serving the console's build (`consoleDir`) and one Chromium page, for a
 * test file: its cases go on from where the one before left off.
 */
export async function startConsoleBrowser(consoleDir: string): Promise<ConsoleBrowser> {
  if (chromiumMissing)
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`,
    )
  const root = { id: `root-${randomBytes(4).toString('hex')}`, secret: randomBytes(24).toString('base64url') }
  const dataDir = mkdtempSync(join(tmpdir(), 'console-test-'))
  const [service, browser] = await Promise.all([
    startProcess('all-in-one', {
      DATA_DIR: dataDir,
      AUTH_CLIENT_ID: root.id,
      AUTH_CLIENT_SECRET: root.secret,
      MASTER_SECRET: randomBytes(32).toString('base64url'),
      CONSOLE_DIR: consoleDir,
      ...(process.env.TEST_DATABASE_URL ? { DATABASE_URL: process.env.TEST_DATABASE_URL } : {}),
    }),
    chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // Chromium's sandbox needs user namespaces, which root in a container does not get.
      args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    }),
  ])
  expect(await service.ready(), service.stderr()).toBe(200)
  const page = await browser.newPage()
  // A step that does not happen fails within seconds, not at the test's 30 s.
  page.setDefaultTimeout(10_000)
  const policyViolations: string[] = []
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy'))
      policyViolations.push(`${page.url()}: ${message.text()} ${JSON.stringify(message.location())}`)
  })
  return {
    service,
    browser,
    page,
    root,
    policyViolations,
    url: (path) => `${service.origin}/console${path}`,
    async close() {
      await browser.close()
      await service.stop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** axe-core in the page (evaluated over the DevTools protocol, which the page's CSP allows): no serious or critical violation. */
export async function expectAccessible(page: Page, what: string) {
  // The page at rest: a link the pointer still hovers after its click is drawn in its hover colours.
  await page.mouse.move(0, 0)
  await page.evaluate(axe.source)
  const violations = await page.evaluate(async () => {
    // The page's globals: this file is typechecked for Node, without the DOM's.
    const results = await (globalThis as unknown as { axe: typeof axe }).axe.run()
    return results.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map(
        (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
      )
  })
  expect(violations, what).toStrictEqual([])
}

export async function signIn(page: Page, clientId: string, secret: string) {
  await page.getByLabel('Client id').fill(clientId)
  await page.getByLabel('Client secret').fill(secret)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
}
