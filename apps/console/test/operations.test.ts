import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createManagementClient, type ManagementClient } from '@credential-service/sdk'
import type { Locator, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type RegistrarStandIn, startRegistrarStandIn } from '../../all-in-one/test/registrar-standin'
import { presentOverHttp, redeemOffer } from '../../all-in-one/test/wallet'
import {
  type ConsoleUnderTest,
  expectAccessible as expectAccessibleIn,
  signIn,
  skipWithoutChromium,
  startConsole,
} from './browser'

/**
 * The console's operations pages in Chromium (issue 22): attribute, login and wallet providers,
 * webhook endpoints with their deliveries and replays (a receiver in this file, a delivery made by
 * the test wallet's presentation), the registrar against the repository's registrar stand-in,
 * schema-metadata signing, audit events, metrics and trust lists. One server, one browser, one page: each case
 * goes on from where the one before left off.
 */
const skip = skipWithoutChromium('operations.test.ts')
const VCT = 'urn:example:console:operations:1'

/** A webhook receiver whose answer the test sets: it counts the calls. */
async function startReceiver() {
  const receiver = { status: 500, calls: 0, url: '', server: undefined as Server | undefined }
  receiver.server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      receiver.calls++
      res.writeHead(receiver.status).end()
    })
  })
  await new Promise<void>((resolve) => receiver.server?.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hooks`
  return receiver
}

describe.skipIf(skip)(
  'console operations in Chromium: providers, webhooks, registrar, metadata, audit',
  () => {
    const root = {
      id: `root-${randomBytes(4).toString('hex')}`,
      secret: randomBytes(24).toString('base64url'),
    }
    const tenant = `t-${randomBytes(4).toString('hex')}`
    const admin = { id: `${tenant}-ops`, secret: randomBytes(18).toString('base64url') }
    const registrarClient = { id: 'rp-client', secret: `registrar-${randomBytes(12).toString('hex')}` }
    let harness: ConsoleUnderTest
    let page: Page
    let api: ManagementClient
    let receiver: Awaited<ReturnType<typeof startReceiver>>
    let registrar: RegistrarStandIn
    let rootCertificate = ''

    beforeAll(async () => {
      ;[receiver, registrar] = await Promise.all([startReceiver(), startRegistrarStandIn(registrarClient)])
      harness = await startConsole(root, {
        // The receiver and the registrar listen on plain http on loopback; one attempt per delivery.
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
        WEBHOOK_MAX_ATTEMPTS: '1',
      })
      page = harness.page
      const operator = createManagementClient({
        baseUrl: harness.service.origin,
        clientId: root.id,
        clientSecret: root.secret,
      })
      await operator.createTenant({ id: tenant, name: 'Operations' })
      await operator.createClientOfTenant(tenant, {
        clientId: admin.id,
        clientSecret: admin.secret,
        roles: [
          'tenant:admin',
          'key:manage',
          'issuance:config',
          'issuance:offer',
          'presentation:config',
          'presentation:request',
          'registrar:manage',
          'metrics:read',
        ],
      })
      api = createManagementClient({
        baseUrl: harness.service.origin,
        clientId: admin.id,
        clientSecret: admin.secret,
      })
      const keys = await api.createKeyChain({
        source: 'generate',
        id: 'keys',
        certificate: { mode: 'internal-ca', subject: `CN=${tenant},C=DE` },
      })
      rootCertificate = keys.rootCertificate ?? ''
      await api.createCredentialConfig({
        id: 'pid',
        config: { format: 'dc+sd-jwt', vct: VCT },
        keyChainId: 'keys',
        fields: [{ path: ['given_name'], type: 'string', mandatory: true, disclosable: true }],
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
              claims: [{ path: ['given_name'] }],
            },
          ],
        },
      })
      await page.goto(harness.url('/attribute-providers'))
      await signIn(page, admin.id, admin.secret)
    }, 90_000)

    afterAll(async () => {
      await harness?.stop()
      receiver?.server?.close()
      await registrar?.close()
    })

    // A case that failed with a dialog open leaves the next ones their page.
    afterEach(async () => {
      for (let i = 0; i < 3 && (await page.getByRole('dialog').count()) > 0; i++)
        await page.keyboard.press('Escape')
    })

    const navigation = () => page.getByRole('navigation', { name: 'Console pages' })
    const expectAccessible = (what: string) => expectAccessibleIn(page, what)
    const dialog = (name: string) => page.getByRole('dialog', { name })
    const rows = (table: string) => page.getByRole('table', { name: table }).getByRole('row')

    /** The error Mantine shows under an input (in the input's wrapper), '' when none. */
    async function fieldError(input: Locator): Promise<string> {
      const error = input
        .first()
        .locator('xpath=ancestor::div[contains(@class, "mantine-InputWrapper-root")][1]')
        .locator('.mantine-InputWrapper-error')
      return (await error.count()) > 0 ? ((await error.first().textContent()) ?? '') : ''
    }

    /** Picks an option of a Mantine Select by its visible label. */
    async function pick(within: Locator, label: string, option: string) {
      // A required input's label ends in an asterisk.
      await within
        .getByLabel(new RegExp(`^${label}( \\*)?$`))
        .first()
        .click()
      await page.getByRole('option', { name: option, exact: true }).click()
    }

    it('shows the operations pages its roles allow, each checked with axe', async () => {
      await page.getByRole('heading', { name: `Attribute providers of ${tenant}` }).waitFor()
      const links = await navigation().getByRole('link').allTextContents()
      for (const label of [
        'Attribute providers',
        'Login providers',
        'Wallet providers',
        'Trust lists',
        'Webhook endpoints',
        'Registrar',
        'Schema metadata',
        'Audit events',
        'Metrics',
      ])
        expect(links).toContain(label)
      await expectAccessible('attribute providers page')
    })

    it('attribute provider: the API schema in the browser, a 422 at its field, created with a signing secret shown once', async () => {
      await page.getByRole('button', { name: 'Create attribute provider' }).click()
      const form = dialog('Create attribute provider')
      await expectAccessible('create attribute provider dialog')
      await form.getByRole('textbox', { name: /^Id/ }).fill('crm')
      await form.getByLabel(/^URL/).fill('http://10.1.2.3/claims')
      // Refused by the API's schema before anything is sent.
      await form.getByLabel('Timeout (ms)').fill('50')
      await form.getByRole('button', { name: 'Create' }).click()
      await expect.poll(() => fieldError(form.getByLabel('Timeout (ms)'))).toMatch(/100/)
      expect(await fieldError(form.getByLabel(/^URL/))).toBe('')
      // Refused by the API (422, the outbound policy): the problem's errors[] at the URL.
      await form.getByLabel('Timeout (ms)').fill('2000')
      await form.getByRole('button', { name: 'Create' }).click()
      await expect.poll(() => fieldError(form.getByLabel(/^URL/))).toContain('OUTBOUND_ALLOWED_HOSTS')
      expect(await fieldError(form.getByLabel('Timeout (ms)'))).toBe('')
      await expectAccessible('attribute provider refused')
      await form.getByLabel(/^URL/).fill(`${receiver.url}/claims`)
      await pick(form, 'Authentication', 'HMAC-SHA256 signature')
      await form.getByRole('button', { name: 'Create' }).click()
      const secret = dialog('Signing secret')
      await secret.waitFor()
      const shown = (await page.getByTestId('signing-secret').textContent()) ?? ''
      expect(shown.length).toBeGreaterThanOrEqual(32)
      await expectAccessible('signing secret dialog')
      await secret.getByRole('button', { name: 'I have stored it' }).click()
      await expect.poll(() => rows('Attribute providers').allTextContents()).toHaveLength(2)
      expect(await rows('Attribute providers').nth(1).textContent()).toContain('hmac')
      const stored = await api.getAttributeProvider('crm')
      expect(stored).toMatchObject({ url: `${receiver.url}/claims`, timeoutMs: 2000, auth: { type: 'hmac' } })
    })

    it('attribute provider: edited (PUT) with an API key asked for again, then deleted with confirmation', async () => {
      await page.getByRole('button', { name: 'Edit crm' }).click()
      const form = dialog('Edit attribute provider crm')
      expect(await form.getByRole('textbox', { name: /^Id/ }).isDisabled()).toBe(true)
      await form.getByLabel('Timeout (ms)').fill('7000')
      await pick(form, 'Authentication', 'API key in a header')
      await form.getByRole('button', { name: 'Save' }).click()
      // The key is required and at least 8 characters (the API's schema).
      await expect.poll(() => fieldError(form.getByLabel(/^API key/))).not.toBe('')
      await form.getByLabel(/^API key/).fill('key-of-the-crm-0123')
      await form.getByRole('button', { name: 'Save' }).click()
      await form.waitFor({ state: 'detached' })
      await expect.poll(async () => (await api.getAttributeProvider('crm')).timeoutMs).toBe(7000)
      expect((await api.getAttributeProvider('crm')).auth).toStrictEqual({
        type: 'api-key',
        headerName: 'x-api-key',
      })
      await page.getByRole('button', { name: 'Delete crm' }).click()
      await dialog('Delete attribute provider crm?').getByRole('button', { name: 'Delete' }).click()
      await page.getByText('No attribute provider yet.').waitFor()
      await expect(api.getAttributeProvider('crm')).rejects.toMatchObject({ status: 404 })
    })

    it('login and wallet providers: created; issue 25: a wallet provider names trust lists, none is a 422 on the field', async () => {
      await navigation().getByRole('link', { name: 'Login providers' }).click()
      await page.getByRole('heading', { name: `Login providers of ${tenant}` }).waitFor()
      await expectAccessible('login providers page')
      await page.getByRole('button', { name: 'Create login provider' }).click()
      const login = dialog('Create login provider')
      await login.getByRole('textbox', { name: /^Id/ }).fill('idp')
      await login.getByLabel(/^Issuer/).fill('http://127.0.0.1:9/realm')
      await login.getByLabel(/^Client id/).fill('wallet-login')
      await login.getByLabel('Scopes').fill('openid profile')
      await login.getByLabel(/^Client secret/).fill('login-secret')
      await login.getByRole('button', { name: 'Create' }).click()
      await login.waitFor({ state: 'detached' })
      await expect.poll(() => rows('Login providers').nth(1).textContent()).toContain('stored')
      expect(await api.getLoginProvider('idp')).toMatchObject({
        scopes: ['openid', 'profile'],
        hasClientSecret: true,
      })

      // Issue 26: kind presentation names one of the tenant's presentation configurations.
      await page.getByRole('button', { name: 'Create login provider' }).click()
      const byPid = dialog('Create login provider')
      await byPid.getByRole('textbox', { name: /^Id/ }).fill('pid-login')
      await byPid.locator('label', { hasText: /^Presentation$/ }).click()
      await expect.poll(() => byPid.getByLabel(/^Issuer/).count()).toBe(0)
      await byPid.getByLabel(/^Presentation configuration/).click()
      await page.getByRole('option', { name: 'ask', exact: true }).click()
      await expectAccessible('login provider of kind presentation')
      await byPid.getByRole('button', { name: 'Create' }).click()
      await byPid.waitFor({ state: 'detached' })
      const stored = await api.getLoginProvider('pid-login')
      expect(stored).toMatchObject({
        kind: 'presentation',
        presentationConfigId: 'ask',
        hasClientSecret: false,
      })
      // Edited and saved unchanged: nothing dropped.
      await page.getByRole('button', { name: 'Edit pid-login' }).click()
      const edit = dialog('Edit login provider pid-login')
      expect(await edit.getByLabel(/^Presentation configuration/).inputValue()).toBe('ask')
      await edit.getByRole('button', { name: 'Save' }).click()
      await edit.waitFor({ state: 'detached' })
      expect(await api.getLoginProvider('pid-login')).toStrictEqual({
        ...stored,
        updatedAt: expect.any(String),
      })
      // And the OpenID provider, edited and saved unchanged, keeps its secret and scopes.
      const idp = await api.getLoginProvider('idp')
      await page.getByRole('button', { name: 'Edit idp' }).click()
      const editIdp = dialog('Edit login provider idp')
      await editIdp.getByRole('button', { name: 'Save' }).click()
      await editIdp.waitFor({ state: 'detached' })
      expect(await api.getLoginProvider('idp')).toStrictEqual({ ...idp, updatedAt: expect.any(String) })

      await navigation().getByRole('link', { name: 'Wallet providers' }).click()
      await page.getByRole('heading', { name: `Wallet providers of ${tenant}` }).waitFor()
      // Issue 25: a provider names trust lists (its PEM anchors are a pem list).
      await api.createTrustList({
        id: 'wallet-roots',
        source: { type: 'pem', certificates: [rootCertificate] },
      })
      await page.getByRole('button', { name: 'Create wallet provider' }).click()
      const wallet = dialog('Create wallet provider')
      await wallet.getByRole('textbox', { name: /^Id/ }).fill('wallets')
      await wallet.getByLabel(/^Name/).fill('Test wallets')
      await wallet.getByRole('button', { name: 'Create' }).click()
      await expect.poll(() => fieldError(wallet.getByLabel(/^Trust lists/))).not.toBe('')
      await expectAccessible('wallet provider refused')
      await wallet.getByLabel(/^Trust lists/).click()
      await page.getByRole('option', { name: 'wallet-roots', exact: true }).click()
      await wallet.getByLabel(/^Name/).click()
      await wallet.getByRole('button', { name: 'Create' }).click()
      await wallet.waitFor({ state: 'detached' })
      await expect.poll(() => rows('Wallet providers').nth(1).textContent()).toContain('Test wallets')
      expect((await api.getWalletProvider('wallets')).trustListIds).toStrictEqual(['wallet-roots'])
      // The trust list case below starts from a tenant without lists.
      await api.deleteWalletProvider('wallets')
      await api.deleteTrustList('wallet-roots')
    })

    it('webhook endpoint: created and edited; a presentation result delivered, failed, replayed until delivered', async () => {
      await navigation().getByRole('link', { name: 'Webhook endpoints' }).click()
      await page.getByRole('heading', { name: `Webhook endpoints of ${tenant}` }).waitFor()
      await page.getByRole('button', { name: 'Create webhook endpoint' }).click()
      const create = dialog('Create webhook endpoint')
      await create.getByRole('textbox', { name: /^Id/ }).fill('hooks')
      await create.getByLabel(/^URL/).fill(receiver.url)
      await create.getByRole('button', { name: 'Create' }).click()
      await create.waitFor({ state: 'detached' })
      await page.getByRole('button', { name: 'Edit hooks' }).click()
      const edit = dialog('Edit webhook endpoint hooks')
      await edit.locator('.mantine-MultiSelect-input').click()
      await page.getByRole('option', { name: 'presentation.result' }).click()
      await page.keyboard.press('Escape')
      await edit.getByRole('button', { name: 'Save' }).click()
      await edit.waitFor({ state: 'detached' })
      await expect.poll(() => rows('Webhook endpoints').nth(1).textContent()).toContain('presentation.result')
      await expectAccessible('webhook endpoints page')

      // A presentation result for the endpoint: the test wallet gets a credential and presents it.
      const offer = await api.createOffer({
        credentialConfigurationIds: ['pid'],
        claims: { pid: { given_name: 'Erika' } },
      })
      const issued = await redeemOffer({ credentialOffer: offer.credentialOffer, configurationId: 'pid' })
      const request = await api.createPresentationRequest({
        presentationConfigId: 'ask',
        webhookEndpointId: 'hooks',
      })
      const answer = await presentOverHttp({
        // An x509 request goes by reference; only redirect_uri requests (by value) have none.
        requestUri: request.requestUri ?? '',
        credentialQueryId: 'pid',
        credential: issued.credential,
        holder: issued.holder,
        disclose: { given_name: true },
      })
      expect(answer.status).toBe(200)
      await answer.body?.cancel()

      await page.getByRole('link', { name: 'Deliveries of hooks' }).click()
      await page.getByRole('heading', { name: 'Deliveries of hooks' }).waitFor()
      const statusOfFirst = async () => {
        await page.getByRole('button', { name: 'Refresh' }).click()
        return (
          (await rows('Deliveries')
            .nth(1)
            .getByTestId('delivery-status')
            .textContent({ timeout: 2000 })
            .catch(() => '')) ?? ''
        )
      }
      // The receiver answers 500 and there is one attempt: failed.
      await expect.poll(statusOfFirst, { timeout: 15_000 }).toBe('failed')
      expect(receiver.calls).toBe(1)
      expect(await rows('Deliveries').nth(1).textContent()).toContain(request.sessionId)
      await expectAccessible('deliveries page')
      await rows('Deliveries').nth(1).getByRole('button', { name: /^whd_/ }).click()
      const detail = page.getByTestId('delivery-detail')
      await detail.waitFor()
      expect(await detail.textContent()).toContain('500')
      await expectAccessible('delivery detail')
      await page.keyboard.press('Escape')

      // Replay failed (confirmed): queued again, and fails again at the receiver.
      await page.getByRole('button', { name: 'Replay failed' }).click()
      await dialog('Send every failed delivery of hooks again?')
        .getByRole('button', { name: 'Replay failed' })
        .click()
      await expect
        .poll(() => page.getByTestId('replay-result').textContent())
        .toContain('1 failed delivery queued again')
      await expect.poll(() => receiver.calls, { timeout: 15_000 }).toBe(2)
      await expect.poll(statusOfFirst, { timeout: 15_000 }).toBe('failed')

      // The receiver is back: the one delivery replayed is delivered.
      receiver.status = 204
      await page.getByRole('button', { name: /^Replay whd_/ }).click()
      await expect
        .poll(() => page.getByTestId('replay-result').textContent())
        .toMatch(/^Delivery whd_\w+ queued again/)
      await expect.poll(statusOfFirst, { timeout: 15_000 }).toBe('delivered')
      expect(receiver.calls).toBe(3)
      await pick(page.locator('main'), 'Status', 'failed')
      await page.getByText('No delivery matches.').waitFor()
    }, 90_000)

    it('registrar: connected to the stand-in, registered, access and registration certificates, disconnected', async () => {
      await navigation().getByRole('link', { name: 'Registrar' }).click()
      await page.getByRole('heading', { name: `Registrar of ${tenant}` }).waitFor()
      expect(await page.getByTestId('registrar-status').textContent()).toBe('Not connected to a registrar.')
      await expectAccessible('registrar page, not connected')
      const connection = page.getByRole('form', { name: 'Registrar connection' })
      await connection.getByLabel(/^Base URL/).fill(registrar.baseUrl)
      await connection.getByLabel(/^Token URL/).fill('not a URL')
      await connection.getByRole('button', { name: 'Connect' }).click()
      await expect.poll(() => fieldError(connection.getByLabel(/^Token URL/))).not.toBe('')
      await connection.getByLabel(/^Token URL/).fill(registrar.tokenUrl)
      await connection.getByLabel(/^Registrar client id/).fill(registrarClient.id)
      await connection.getByLabel(/^Registrar client secret/).fill(registrarClient.secret)
      await connection.getByRole('button', { name: 'Connect' }).click()
      await expect
        .poll(() => page.getByTestId('registrar-status').textContent())
        .toContain(registrar.tokenUrl)

      const register = page.getByRole('form', { name: 'Register at the registrar' })
      await register.getByLabel(/^Legal name/).fill('Operations GmbH')
      await register.getByRole('button', { name: 'Register' }).click()
      await expect.poll(() => page.getByTestId('registrar-status').textContent()).toContain('Operations GmbH')
      expect(registrar.relyingParties.size).toBe(1)

      const access = page.getByRole('form', { name: 'Request an access certificate' })
      await access.getByLabel(/^Key chain/).fill('keys')
      await access.getByRole('button', { name: 'Request access certificate' }).click()
      await expect
        .poll(() => page.getByTestId('access-certificate').textContent())
        .toContain('stored on key chain keys')
      expect((await api.getKeyChain('keys')).certificateMode).toBe('registrar')

      const registration = page.getByRole('form', { name: 'Request a registration certificate' })
      await registration.getByLabel(/^Presentation configuration/).fill('ask')
      await registration.getByLabel(/^Purpose 1/).fill('Who you are')
      await registration.getByLabel(/^Privacy policy URL/).fill('https://verifier.example.com/privacy')
      await registration.getByLabel(/^Support/).fill('support@example.com')
      await registration.getByRole('button', { name: 'Request registration certificate' }).click()
      await page.getByTestId('registration-certificate').or(registration.getByRole('alert')).waitFor()
      expect(await registration.textContent()).not.toContain('Not saved')
      await expect
        .poll(() => page.getByTestId('registration-jwt').textContent())
        .toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/)
      await expectAccessible('registrar page, connected')

      await page.getByRole('button', { name: 'Delete connection' }).click()
      await dialog('Delete the registrar connection?')
        .getByRole('button', { name: 'Delete connection' })
        .click()
      await expect
        .poll(() => page.getByTestId('registrar-status').textContent())
        .toBe('Not connected to a registrar.')
      await expect(api.getRegistrarConfig()).rejects.toMatchObject({ status: 404 })
    }, 60_000)

    it('schema metadata: signed from a configuration with its integrity; versions chained, a wrong previous one refused', async () => {
      await navigation().getByRole('link', { name: 'Schema metadata' }).click()
      await page.getByRole('heading', { name: `Schema metadata of ${tenant}` }).waitFor()
      await expectAccessible('schema metadata page')
      const form = page.getByRole('form', { name: 'Sign schema metadata' })
      await form.getByLabel(/^Type metadata/).fill('{"name": ')
      await form.getByRole('button', { name: 'Sign' }).click()
      await expect.poll(() => fieldError(form.getByLabel(/^Type metadata/))).toContain('Not JSON')
      await form.getByLabel(/^Type metadata/).fill('{"name": "Operations PID"}')
      await form.getByLabel(/^Credential configuration/).fill('pid')
      await form.getByRole('button', { name: 'Sign' }).click()
      await page.getByTestId('signed-metadata').waitFor()
      const jws = (await page.getByTestId('metadata-jws').textContent()) ?? ''
      const payload = JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8'))
      expect(payload).toMatchObject({ vct: VCT, name: 'Operations PID' })
      expect(await page.getByTestId('metadata-integrity').textContent()).toMatch(/^sha256-/)
      await expectAccessible('signed metadata')

      await form.getByRole('switch', { name: /^Sign a new version/ }).check()
      await form.getByLabel(/^Version/).fill('1.0.0')
      await form.getByRole('button', { name: 'Sign version' }).click()
      await expect.poll(() => page.getByTestId('signed-metadata').textContent()).toContain('1.0.0')
      const first = (await page.getByTestId('metadata-integrity').textContent()) ?? ''
      // The next version follows the one just signed: its integrity is filled in.
      expect(await form.getByLabel(/^Previous integrity/).inputValue()).toBe(first)
      await form.getByLabel(/^Version/).fill('1.1.0')
      await form.getByLabel(/^Previous integrity/).fill(`sha256-${Buffer.alloc(32).toString('base64')}`)
      await form.getByRole('button', { name: 'Sign version' }).click()
      await form.getByRole('alert').waitFor()
      expect(await page.getByTestId('signed-metadata').textContent()).not.toContain('1.1.0')
      await form.getByLabel(/^Previous integrity/).fill(first)
      await form.getByRole('button', { name: 'Sign version' }).click()
      await expect
        .poll(() => page.getByTestId('signed-metadata').textContent())
        .toContain('Previous version1.0.0')
    })

    it('audit events: the changes made on these pages, filtered by the API', async () => {
      await navigation().getByRole('link', { name: 'Audit events' }).click()
      await page.getByRole('heading', { name: `Audit events of ${tenant}` }).waitFor()
      await expect.poll(() => rows('Audit events').count()).toBeGreaterThan(10)
      await expectAccessible('audit events page')
      await pick(
        page.getByRole('form', { name: 'Filter audit events' }),
        'Resource type',
        'attribute-provider',
      )
      await page.getByRole('button', { name: 'Apply filters' }).click()
      await expect
        .poll(async () =>
          (await rows('Audit events').allTextContents())
            .slice(1)
            .map((row) => /(create|update|delete)/.exec(row)?.[1]),
        )
        .toStrictEqual(['delete', 'update', 'create'])
      expect(await rows('Audit events').nth(1).textContent()).toContain(admin.id)
      await pick(page.getByRole('form', { name: 'Filter audit events' }), 'Resource type', 'webhook-delivery')
      await page.getByRole('button', { name: 'Apply filters' }).click()
      // The two replays.
      await expect.poll(() => rows('Audit events').count()).toBe(3)
    })

    it('metrics: the Prometheus text of the tenant, filtered in the page', async () => {
      await navigation().getByRole('link', { name: 'Metrics' }).click()
      await page.getByRole('heading', { name: 'Metrics' }).waitFor()
      await page.getByTestId('metrics-text').waitFor()
      const all = Number.parseInt((await page.getByTestId('metrics-count').textContent()) ?? '', 10)
      expect(all).toBeGreaterThan(0)
      await page.getByLabel('Only lines containing').fill(`tenant="${tenant}"`)
      const text = (await page.getByTestId('metrics-text').textContent()) ?? ''
      expect(text.split('\n').every((line) => line.includes(`tenant="${tenant}"`))).toBe(true)
      expect(text).not.toBe('')
      await expectAccessible('metrics page')
    })

    it('trust list: a PEM list created, listed as current, named by a presentation configuration, kept when loaded again', async () => {
      await navigation().getByRole('link', { name: 'Trust lists' }).click()
      await page.getByRole('heading', { name: `Trust lists of ${tenant}` }).waitFor()
      await expectAccessible('trust lists page')
      await page.getByRole('button', { name: 'Create trust list' }).click()
      const form = dialog('Create trust list')
      await form.getByRole('textbox', { name: /^Id/ }).fill('roots')
      // A fetched list asks for where it is and who signs it.
      await form.getByText('ETSI trusted list (TS 119 612)', { exact: true }).click()
      await form.getByLabel(/^URL/).waitFor()
      await form.getByLabel(/^Signer certificates/).waitFor()
      await form.getByLabel('Refresh (seconds)').waitFor()
      await expectAccessible('create trust list dialog (ETSI trusted list)')
      await form.getByText('PEM certificates', { exact: true }).click()
      await form.getByLabel(/^Certificates/).fill(rootCertificate)
      await expectAccessible('create trust list dialog')
      await form.getByRole('button', { name: 'Create' }).click()
      await form.waitFor({ state: 'detached' })
      await expect.poll(() => rows('Trust lists').nth(1).textContent()).toMatch(/^rootspemcurrent1/)
      expect((await api.getTrustList('roots')).status).toMatchObject({
        state: 'current',
        certificateCount: 1,
      })

      // Named by a presentation configuration in its editor.
      await navigation().getByRole('link', { name: 'Presentation configurations' }).click()
      await page.getByRole('link', { name: 'ask', exact: true }).click()
      await page.getByRole('heading', { name: 'Presentation configuration ask' }).waitFor()
      const editor = page.getByRole('form', { name: 'Presentation configuration' })
      await editor.getByLabel('Trust lists', { exact: true }).click()
      await page.getByRole('option', { name: 'roots', exact: true }).click()
      await page.keyboard.press('Escape')
      await editor.getByLabel(/^Send trusted_authorities from the anchors/).check()
      await editor.getByRole('button', { name: 'Save configuration' }).click()
      await page.getByRole('heading', { name: `Presentation configurations of ${tenant}` }).waitFor()
      expect(await api.getPresentationConfig('ask')).toMatchObject({
        trustListIds: ['roots'],
        trustedAuthorities: 'from-anchors',
      })

      // Loaded again (a new page load and sign-in): selected; saved without a change, kept.
      await page.goto(harness.url('/presentation-configs/ask/edit'))
      await signIn(page, admin.id, admin.secret)
      await page.getByRole('heading', { name: 'Presentation configuration ask' }).waitFor()
      await editor.getByText('roots', { exact: true }).waitFor()
      expect(await editor.getByLabel(/^Send trusted_authorities from the anchors/).isChecked()).toBe(true)
      await expectAccessible('presentation configuration with a trust list')
      await editor.getByRole('button', { name: 'Save configuration' }).click()
      await page.getByRole('heading', { name: `Presentation configurations of ${tenant}` }).waitFor()
      expect(await api.getPresentationConfig('ask')).toMatchObject({
        trustListIds: ['roots'],
        trustedAuthorities: 'from-anchors',
      })

      // Named, it cannot be deleted: the 409's message in the dialog.
      await navigation().getByRole('link', { name: 'Trust lists' }).click()
      await page.getByRole('button', { name: 'Delete roots' }).click()
      const confirm = dialog('Delete trust list roots?')
      await confirm.getByRole('button', { name: 'Delete' }).click()
      await expect.poll(() => confirm.getByRole('alert').textContent()).toMatch(/ask/)
      await expectAccessible('trust list delete refused')
      await confirm.getByRole('button', { name: 'Cancel' }).click()
      expect((await api.getTrustList('roots')).id).toBe('roots')
    })

    it('issue 22: no page broke the Content-Security-Policy', () => {
      expect(harness.policyViolations).toStrictEqual([])
    })
  },
)
