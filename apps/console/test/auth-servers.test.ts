import { randomBytes } from 'node:crypto'
import { createManagementClient, type ManagementClient } from '@credential-service/sdk'
import type { Locator, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  type ConsoleUnderTest,
  errorOf,
  expectAccessible as expectAccessibleIn,
  signIn,
  skipWithoutChromium,
  startConsole,
} from './browser'

/**
 * The console's Authorization servers page in Chromium (issue 41 item 4): external OAuth servers
 * whose access tokens the tenant's credential endpoint accepts (OpenID4VCI 1.0 §12.2.4). One
 * server, one browser, one page: each case goes on from where the one before left off.
 */
const skip = skipWithoutChromium('auth-servers.test.ts')
const KEYCLOAK = 'https://login.example.com/realms/wallets'
const BANK = 'https://oauth.bank.example/as'

describe.skipIf(skip)('console authorization servers in Chromium (issue 41, OpenID4VCI 1.0 §12.2.4)', () => {
  const root = { id: `root-${randomBytes(4).toString('hex')}`, secret: randomBytes(24).toString('base64url') }
  const tenant = `t-${randomBytes(4).toString('hex')}`
  const admin = { id: `${tenant}-as`, secret: randomBytes(18).toString('base64url') }
  let harness: ConsoleUnderTest
  let page: Page
  let api: ManagementClient

  beforeAll(async () => {
    harness = await startConsole(root)
    page = harness.page
    const operator = createManagementClient({
      baseUrl: harness.service.origin,
      clientId: root.id,
      clientSecret: root.secret,
    })
    await operator.createTenant({ id: tenant, name: 'External authorization' })
    await operator.createClientOfTenant(tenant, {
      clientId: admin.id,
      clientSecret: admin.secret,
      roles: ['issuance:config', 'key:manage'],
    })
    api = createManagementClient({
      baseUrl: harness.service.origin,
      clientId: admin.id,
      clientSecret: admin.secret,
    })
    await api.createKeyChain({
      source: 'generate',
      id: 'keys',
      certificate: { mode: 'internal-ca', subject: `CN=${tenant},C=DE` },
    })
    for (const id of ['pid', 'employee'])
      await api.createCredentialConfig({
        id,
        config: { format: 'dc+sd-jwt', vct: `urn:example:console:${id}:1`, scope: id },
        keyChainId: 'keys',
        fields: [{ path: ['given_name'], type: 'string', mandatory: true, disclosable: true }],
      })
    await page.goto(harness.url('/auth-servers'))
    await signIn(page, admin.id, admin.secret)
  }, 90_000)

  afterAll(async () => {
    await harness?.stop()
  })

  // A case that failed with a dialog open leaves the next ones their page.
  afterEach(async () => {
    for (let i = 0; i < 3 && (await page.getByRole('dialog').count()) > 0; i++)
      await page.keyboard.press('Escape')
  })

  const expectAccessible = (what: string) => expectAccessibleIn(page, what)
  const dialog = (name: string) => page.getByRole('dialog', { name })
  const rows = () => page.getByRole('table', { name: 'Authorization servers' }).getByRole('row')
  const row = (id: string) => rows().filter({ has: page.getByRole('cell', { name: id, exact: true }) })

  /** Picks options of a Mantine Select or MultiSelect by their labels. */
  async function pick(input: Locator, ...options: string[]) {
    await input.click()
    for (const option of options) await page.getByRole('option', { name: option, exact: true }).click()
    // A MultiSelect stays open (Escape closes it); Escape with a Select closed would close the dialog.
    if (await page.getByRole('listbox').isVisible()) await page.keyboard.press('Escape')
  }

  /** The issuer's metadata `authorization_servers` (OpenID4VCI 1.0 §12.2.4). */
  async function authorizationServers(): Promise<string[]> {
    const response = await fetch(
      `${harness.service.origin}/.well-known/openid-credential-issuer/issuers/${tenant}`,
    )
    expect(response.status).toBe(200)
    return ((await response.json()) as { authorization_servers?: string[] }).authorization_servers ?? []
  }

  it('is in the navigation of an issuance:config client; the empty page passes axe', async () => {
    await page.getByRole('heading', { name: `Authorization servers of ${tenant}` }).waitFor()
    const links = await page
      .getByRole('navigation', { name: 'Console pages' })
      .getByRole('link')
      .allTextContents()
    expect(links).toContain('Authorization servers')
    await page.getByText('No authorization server yet.').waitFor()
    await expectAccessible('authorization servers page')
  })

  it('§12.2.4: a JWT server created after refusals at the configurations (browser) and the issuer (API 422) fields', async () => {
    await page.getByRole('button', { name: 'Create authorization server' }).click()
    const form = dialog('Create authorization server')
    await expectAccessible('create authorization server dialog')
    await form.getByRole('textbox', { name: /^Id/ }).fill('keycloak')
    // An internal address: the outbound policy refuses it (422 naming body.issuer).
    await form.getByLabel(/^Issuer/).fill('https://10.1.2.3/realms/wallets')
    await form.getByRole('button', { name: 'Create' }).click()
    // The API's schema in the browser: at least one configuration, nothing sent yet.
    const configurations = form.getByLabel(/^Credential configurations/)
    await expect.poll(() => errorOf(page, configurations)).not.toBe('')
    expect(await errorOf(page, form.getByLabel(/^Issuer/))).toBe('')
    await pick(configurations, 'pid')
    await form.getByRole('button', { name: 'Create' }).click()
    await expect.poll(() => errorOf(page, form.getByLabel(/^Issuer/))).toContain('OUTBOUND_ALLOWED_HOSTS')
    expect(await errorOf(page, configurations)).toBe('')
    await expectAccessible('authorization server refused')
    await expect(api.getAuthServer('keycloak')).rejects.toMatchObject({ status: 404 })

    await form.getByLabel(/^Issuer/).fill(KEYCLOAK)
    // Only scopes name configurations, the attribute provider gives the claims, tokens used once.
    await form.getByRole('checkbox', { name: /^authorization_details/ }).uncheck()
    await pick(form.getByLabel(/^Claims from/), "The configuration's attribute provider")
    await form.getByRole('checkbox', { name: /^Single-use tokens/ }).check()
    await form.getByRole('button', { name: 'Create' }).click()
    await form.waitFor({ state: 'detached' })
    await expect.poll(() => row('keycloak').textContent()).toContain(KEYCLOAK)
    expect(await row('keycloak').textContent()).toContain('jwt')
    expect(await api.getAuthServer('keycloak')).toMatchObject({
      issuer: KEYCLOAK,
      tokenCheck: 'jwt',
      credentialConfigurationIds: ['pid'],
      mapping: ['scope'],
      claimsSource: 'attribute-provider',
      singleUseTokens: true,
      clientId: null,
      hasClientSecret: false,
    })
    // The wallet finds it in the issuer's metadata, after the issuer itself.
    expect(await authorizationServers()).toContain(KEYCLOAK)
  })

  it('introspection: client id required (browser), an issuer taken (API 422 at the field), the secret write-only', async () => {
    await page.getByRole('button', { name: 'Create authorization server' }).click()
    const form = dialog('Create authorization server')
    await form.getByRole('textbox', { name: /^Id/ }).fill('bank')
    await form.getByLabel(/^Issuer/).fill(KEYCLOAK)
    await form.getByText('Introspection (RFC 7662)').click()
    await pick(form.getByLabel(/^Credential configurations/), 'pid', 'employee')
    await form.getByRole('button', { name: 'Create' }).click()
    // zAuthServerInput: "required for tokenCheck 'introspection'".
    await expect.poll(() => errorOf(page, form.getByLabel(/^Client id/))).toContain('introspection')
    await form.getByLabel(/^Client id/).fill('credential-issuer')
    await form.getByLabel(/^Client secret/).fill('introspection-secret-1')
    await form.getByRole('button', { name: 'Create' }).click()
    // One server per issuer in a tenant: a token's iss names one.
    await expect
      .poll(() => errorOf(page, form.getByLabel(/^Issuer/)))
      .toContain('another authorization server')
    await expectAccessible('introspection server refused')
    await form.getByLabel(/^Issuer/).fill(BANK)
    await form.getByRole('button', { name: 'Create' }).click()
    await form.waitFor({ state: 'detached' })
    await expect.poll(() => row('bank').textContent()).toContain('stored')
    // Both kinds of row, their badges legible.
    await expectAccessible('authorization servers listed')
    const stored = await api.getAuthServer('bank')
    expect(stored).toMatchObject({
      tokenCheck: 'introspection',
      clientId: 'credential-issuer',
      hasClientSecret: true,
      credentialConfigurationIds: ['pid', 'employee'],
      mapping: ['authorization_details', 'scope'],
      claimsSource: 'token',
      singleUseTokens: false,
    })
    expect(JSON.stringify(stored)).not.toContain('introspection-secret-1')

    // Edited and saved unchanged: the secret is kept and nothing else moves.
    await page.getByRole('button', { name: 'Edit bank' }).click()
    const edit = dialog('Edit authorization server bank')
    expect(await edit.getByRole('textbox', { name: /^Id/ }).isDisabled()).toBe(true)
    expect(await edit.getByLabel(/^Client secret/).inputValue()).toBe('Keep the stored secret')
    await expectAccessible('edit authorization server dialog')
    await edit.getByRole('button', { name: 'Save' }).click()
    await edit.waitFor({ state: 'detached' })
    expect(await api.getAuthServer('bank')).toStrictEqual({ ...stored, updatedAt: expect.any(String) })
  })

  it('edit: a kept secret never goes to another issuer (422 at the secret), a new one does; switched to JWT it is dropped', async () => {
    await page.getByRole('button', { name: 'Edit bank' }).click()
    const edit = dialog('Edit authorization server bank')
    await edit.getByLabel(/^Issuer/).fill(`${BANK}/v2`)
    await edit.getByRole('button', { name: 'Save' }).click()
    await expect
      .poll(() => errorOf(page, edit.getByLabel(/^Client secret/)))
      .toContain('send the client secret')
    expect((await api.getAuthServer('bank')).issuer).toBe(BANK)
    await pick(edit.getByLabel(/^Client secret/), 'Set a new secret')
    await edit.getByLabel(/^New client secret/).fill('introspection-secret-2')
    await edit.getByRole('button', { name: 'Save' }).click()
    await edit.waitFor({ state: 'detached' })
    expect(await api.getAuthServer('bank')).toMatchObject({ issuer: `${BANK}/v2`, hasClientSecret: true })
    expect(await authorizationServers()).toEqual(expect.arrayContaining([KEYCLOAK, `${BANK}/v2`]))

    await page.getByRole('button', { name: 'Edit bank' }).click()
    const toJwt = dialog('Edit authorization server bank')
    await toJwt.getByText('JWT access tokens (RFC 9068)').click()
    await expect.poll(() => toJwt.getByLabel(/^Client id/).count()).toBe(0)
    await toJwt.getByRole('button', { name: 'Save' }).click()
    await toJwt.waitFor({ state: 'detached' })
    expect(await api.getAuthServer('bank')).toMatchObject({
      tokenCheck: 'jwt',
      clientId: null,
      hasClientSecret: false,
    })
  })

  it('deleted with confirmation: gone from the list, the API and the issuer metadata', async () => {
    await page.getByRole('button', { name: 'Delete keycloak' }).click()
    const confirm = dialog('Delete authorization server keycloak?')
    await expectAccessible('delete authorization server dialog')
    await confirm.getByRole('button', { name: 'Delete' }).click()
    await confirm.waitFor({ state: 'detached' })
    await expect.poll(() => row('keycloak').count()).toBe(0)
    await expect(api.getAuthServer('keycloak')).rejects.toMatchObject({ status: 404 })
    expect(await authorizationServers()).not.toContain(KEYCLOAK)
    expect(harness.policyViolations).toStrictEqual([])
  })
})
