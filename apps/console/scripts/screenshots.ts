/**
 * Screenshots of the console's main pages for docs/console.md: `npm run console:screenshots`.
 * Starts an all-in-one on a fresh embedded database serving the console's test build (as the
 * browser tests do, apps/console/test/browser.ts), seeds a tenant, signs in with Debian's
 * Chromium (CHROMIUM_PATH) and writes one 1280x800 PNG per page to docs/console/.
 *
 * SCREENSHOT_PAGES names a file for every page of PAGES: a page added to the console fails the
 * typecheck (and apps/console/test/screenshots.test.ts) until it has its screenshot.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROLES } from '@credential-service/core-domain'
import { createManagementClient } from '@credential-service/sdk'
import { chromium, type Page } from 'playwright-core'
import { buildTestBundles, TEST_CONSOLE_DIR } from '../../../scripts/test-bundles'
import { startProcess } from '../../all-in-one/test/processes'
import { PAGES, type PageKey } from '../src/access'

/** The file of each page under docs/console/ (and the sign-in page's, `sign-in.png`). */
export const SCREENSHOT_PAGES: Record<PageKey, string> = {
  tenants: 'tenants.png',
  clients: 'clients.png',
  'key-chains': 'key-chains.png',
  'credential-configs': 'credential-configs.png',
  'presentation-configs': 'presentation-configs.png',
  offers: 'offers.png',
  'presentation-requests': 'presentation-requests.png',
  sessions: 'sessions.png',
  'status-lists': 'status-lists.png',
  'attribute-providers': 'attribute-providers.png',
  'login-providers': 'login-providers.png',
  'auth-servers': 'auth-servers.png',
  'wallet-providers': 'wallet-providers.png',
  'trust-lists': 'trust-lists.png',
  federation: 'federation.png',
  'webhook-endpoints': 'webhook-endpoints.png',
  registrar: 'registrar.png',
  'schema-metadata': 'schema-metadata.png',
  'audit-events': 'audit-events.png',
  metrics: 'metrics.png',
  health: 'health.png',
  'issuer-branding': 'issuer-branding.png',
}

/**
 * Until no spinner has shown for half a second (at most 10 s): a list whose query starts after
 * the network was idle (its page's chunk loaded first) would be captured as its spinner.
 */
async function settled(page: Page) {
  const loading = page.getByRole('status', { name: /^Loading/ })
  for (let quiet = 0, round = 0; quiet < 2 && round < 40; round++) {
    await page.waitForTimeout(250)
    quiet = (await loading.count()) === 0 ? quiet + 1 : 0
  }
}

const root = new URL('../../..', import.meta.url).pathname
const OUT = join(root, 'docs/console')

async function main() {
  await buildTestBundles()
  const dataDir = mkdtempSync(join(tmpdir(), 'console-screenshots-'))
  const operator = { id: 'root', secret: randomBytes(24).toString('base64url') }
  const admin = { id: 'acme-admin', secret: randomBytes(24).toString('base64url') }
  const service = await startProcess('all-in-one', {
    DATA_DIR: dataDir,
    AUTH_CLIENT_ID: operator.id,
    AUTH_CLIENT_SECRET: operator.secret,
    MASTER_SECRET: randomBytes(32).toString('base64url'),
    CONSOLE_DIR: join(root, TEST_CONSOLE_DIR),
  })
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    headless: true,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  })
  try {
    if ((await service.ready()) !== 200) throw new Error(`the all-in-one did not start: ${service.stderr()}`)
    const api = createManagementClient({
      baseUrl: service.origin,
      clientId: operator.id,
      clientSecret: operator.secret,
    })
    await api.createTenant({ id: 'acme', name: 'ACME Corporation', description: 'Employee credentials' })
    // Every role of a tenant: every page shows.
    await api.createClientOfTenant('acme', {
      clientId: admin.id,
      clientSecret: admin.secret,
      description: 'Console screenshots',
      roles: ROLES.filter((role) => role !== 'tenant:manage'),
    })
    const tenant = createManagementClient({
      baseUrl: service.origin,
      clientId: admin.id,
      clientSecret: admin.secret,
    })
    await tenant.createKeyChain({
      source: 'generate',
      id: 'issuer-signing',
      description: 'Signs employee credentials',
      certificate: { mode: 'internal-ca', subject: 'CN=ACME issuer,O=ACME', country: 'DE' },
    })
    // Issue 41: an external authorization server for a configuration, on its page.
    await tenant.createCredentialConfig({
      id: 'employee-badge',
      config: { format: 'dc+sd-jwt', vct: 'urn:example:acme:employee-badge:1', scope: 'employee-badge' },
      keyChainId: 'issuer-signing',
      fields: [{ path: ['given_name'], type: 'string', mandatory: true, disclosable: true }],
    })
    await tenant.createAuthServer({
      id: 'acme-keycloak',
      description: 'The employee login',
      issuer: 'https://login.acme.example/realms/employees',
      credentialConfigurationIds: ['employee-badge'],
    })
    // Issue 39: the tenant's issuer and verifier as members of a federation.
    await tenant.createKeyChain({
      source: 'generate',
      id: 'federation',
      description: 'Federation entity key',
    })
    const anchorKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' })
    await tenant.putFederationMembership({
      keyChainId: 'federation',
      authorityHints: ['https://federation.acme.example/intermediate'],
      trustAnchors: [
        {
          entityId: 'https://federation.example.eu',
          jwks: { keys: [{ ...anchorKey, kid: 'anchor-2026', alg: 'ES256' }] },
        },
      ],
      lifetimeSeconds: 86_400,
      organizationName: 'ACME Corporation',
    })

    mkdirSync(OUT, { recursive: true })
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, reducedMotion: 'reduce' })
    await page.goto(`${service.origin}/console/`)
    await page.getByLabel('Client id').waitFor()
    await page.screenshot({ path: join(OUT, 'sign-in.png') })
    await page.getByLabel('Client id').fill(admin.id)
    await page.getByLabel('Client secret').fill(admin.secret)
    await page.getByRole('button', { name: 'Sign in' }).click()
    const navigation = page.getByRole('navigation', { name: 'Console pages' })
    for (const [key, file] of Object.entries(SCREENSHOT_PAGES) as [PageKey, string][]) {
      // Through the navigation: a reload would forget the token.
      await navigation.getByRole('link', { name: PAGES[key].label, exact: true }).click()
      await page.getByRole('heading', { level: 1 }).first().waitFor()
      await page.waitForLoadState('networkidle')
      await settled(page)
      await page.screenshot({ path: join(OUT, file) })
      console.log(`docs/console/${file}`)
    }
  } finally {
    await browser.close()
    await service.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main()
