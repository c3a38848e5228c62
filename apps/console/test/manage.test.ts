import { randomBytes, X509Certificate } from 'node:crypto'
import { createCertificate, generateKeyPair } from '@credential-service/crypto'
import { startFakeVault } from '@credential-service/crypto/testing'
import { createManagementClient, requestClientCredentialsToken } from '@credential-service/sdk'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type ConsoleUnderTest,
  errorOf,
  expectAccessible,
  signIn,
  skipWithoutChromium,
  startConsole,
} from './browser'

/**
 * Updating and the other key chain sources in the console (issue 22), in Chromium against an
 * all-in-one with a Vault transit stand-in: a tenant edited by the operator, a client's roles
 * edited and seen in its next token, a key chain's rotation policy, a key chain imported from a
 * JWK and a certificate made here, an external (Vault) one registered and rotated, problems at
 * their fields.
 */
describe.skipIf(skipWithoutChromium('manage.test.ts'))(
  'updating and key chain sources in the console',
  () => {
    const root = {
      id: `root-${randomBytes(4).toString('hex')}`,
      secret: randomBytes(24).toString('base64url'),
    }
    const tenant = `t-${randomBytes(4).toString('hex')}`
    const admin = { id: `${tenant}-admin`, secret: randomBytes(18).toString('base64url') }
    const worker = { id: `${tenant}-worker`, secret: randomBytes(18).toString('base64url') }
    const vaultToken = randomBytes(12).toString('hex')
    let vault: Awaited<ReturnType<typeof startFakeVault>>
    let run: ConsoleUnderTest
    let page: Page
    let operator: ReturnType<typeof createManagementClient>
    let keys: ReturnType<typeof createManagementClient>

    beforeAll(async () => {
      vault = await startFakeVault(vaultToken)
      run = await startConsole(root, { VAULT_ADDR: vault.address, VAULT_TOKEN: vaultToken })
      page = run.page
      operator = createManagementClient({
        baseUrl: run.service.origin,
        clientId: root.id,
        clientSecret: root.secret,
      })
      await operator.createTenant({ id: tenant, name: 'Before the edit' })
      await operator.createClientOfTenant(tenant, {
        clientId: admin.id,
        clientSecret: admin.secret,
        roles: ['tenant:admin', 'key:manage'],
      })
      await operator.createClientOfTenant(tenant, {
        clientId: worker.id,
        clientSecret: worker.secret,
        roles: ['issuance:offer'],
      })
      keys = createManagementClient({
        baseUrl: run.service.origin,
        clientId: admin.id,
        clientSecret: admin.secret,
      })
      await keys.createKeyChain({ source: 'generate', id: 'signing' })
      await page.goto(run.url('/tenants'))
      await signIn(page, root.id, root.secret)
    }, 90_000)

    afterAll(async () => {
      await run?.stop()
      await vault?.close()
    })

    const tokenOf = (client: { id: string; secret: string }) =>
      requestClientCredentialsToken({
        tokenUrl: `${run.service.origin}/api/oauth2/token`,
        clientId: client.id,
        clientSecret: client.secret,
      })

    /** A self-signed certificate of a key pair made here. */
    const selfSigned = (pair: Awaited<ReturnType<typeof generateKeyPair>>, subject: string) =>
      createCertificate({
        subjectPublicJwk: pair.publicJwk,
        issuerPrivateJwk: pair.privateJwk,
        subject,
        validityDays: 30,
      })

    it('the operator edits a tenant: name, country (issue 43) and credential encryption, saved through PATCH', async () => {
      await page.getByRole('button', { name: `Edit tenant ${tenant}` }).click()
      const dialog = page.getByRole('dialog', { name: `Edit tenant ${tenant}` })
      expect(await dialog.getByLabel('Name').inputValue()).toBe('Before the edit')
      await expectAccessible(page, 'edit tenant dialog')
      await dialog.getByLabel('Name').fill('')
      await dialog.getByRole('button', { name: 'Save tenant' }).click()
      // Checked in the browser with the API's zTenantUpdate: a name of at least one character.
      await expect.poll(() => errorOf(page, dialog.getByLabel('Name'))).not.toBe('')
      await dialog.getByLabel('Name').fill('After the edit')
      // Checked with zTenantUpdate too: ISO 3166-1 alpha-2 letters.
      await dialog.getByLabel('Country').fill('d1')
      await dialog.getByRole('button', { name: 'Save tenant' }).click()
      await expect.poll(() => errorOf(page, dialog.getByLabel('Country'))).not.toBe('')
      await dialog.getByLabel('Country').fill('de')
      await dialog.getByLabel('Credential encryption').click()
      await page.getByRole('option', { name: 'Required of wallets' }).click()
      await dialog.getByRole('button', { name: 'Save tenant' }).click()
      await dialog.waitFor({ state: 'hidden' })
      const row = page.getByRole('row').filter({ hasText: tenant })
      await expect.poll(() => row.textContent()).toContain('After the edit')
      expect(await row.textContent()).toContain('required')
      expect(await row.textContent()).toContain('DE')
      const saved = await operator.getTenant(tenant)
      expect({
        name: saved.name,
        country: saved.country,
        credentialEncryption: saved.credentialEncryption,
      }).toStrictEqual({ name: 'After the edit', country: 'DE', credentialEncryption: 'required' })
    })

    it("a tenant admin edits a client's roles; the client's next token carries them", async () => {
      await page.goto(run.url('/clients'))
      await signIn(page, admin.id, admin.secret)
      await page.getByRole('heading', { name: `API clients of ${tenant}` }).waitFor()
      expect((await tokenOf(worker)).scope).toBe('issuance:offer')
      await page.getByRole('button', { name: `Edit client ${worker.id}` }).click()
      const dialog = page.getByRole('dialog', { name: `Edit client ${worker.id}` })
      expect(await dialog.getByRole('checkbox', { name: 'issuance:offer' }).isChecked()).toBe(true)
      await expectAccessible(page, 'edit client dialog')
      // Spec §5 rule 3 (core-domain grantableRoles, the API's rule): a tenant's client is not offered tenant:manage.
      expect(await dialog.getByRole('checkbox', { name: 'tenant:manage' }).count()).toBe(0)
      await dialog.getByRole('checkbox', { name: 'issuance:offer' }).uncheck()
      await dialog.getByRole('checkbox', { name: 'presentation:request' }).check()
      await dialog.getByLabel('Allowed presentation configurations').fill('pid-check')
      await dialog.getByLabel('Allowed presentation configurations').press('Enter')
      await dialog.getByRole('button', { name: 'Save client' }).click()
      await dialog.waitFor({ state: 'hidden' })
      const row = page.getByRole('row').filter({ hasText: worker.id })
      await expect.poll(() => row.textContent()).toContain('presentation:request')
      expect(await row.textContent()).not.toContain('issuance:offer')
      expect(await row.textContent()).toContain('pid-check')
      expect((await tokenOf(worker)).scope).toBe('presentation:request')
    })

    it("edits a key chain's rotation policy", async () => {
      await page.goto(run.url('/key-chains/signing'))
      await signIn(page, admin.id, admin.secret)
      await page.getByRole('heading', { name: 'Key chain signing' }).waitFor()
      await page.getByRole('button', { name: 'Edit', exact: true }).click()
      const dialog = page.getByRole('dialog', { name: 'Edit key chain signing' })
      await expectAccessible(page, 'edit key chain dialog')
      await dialog.getByRole('checkbox', { name: 'Rotate automatically' }).check()
      await dialog.getByLabel('Interval (days)').fill('30')
      await dialog.getByLabel('Grace period (days)').fill('7')
      // A chain whose leaf certifies another key: the API's problem names body.certificateChain.
      const other = await generateKeyPair('ES256')
      await dialog.getByLabel('New certificate chain').fill(await selfSigned(other, 'CN=Other key'))
      await dialog.getByRole('button', { name: 'Save key chain' }).click()
      await expect.poll(() => errorOf(page, dialog.getByLabel('New certificate chain'))).not.toBe('')
      await dialog.getByLabel('New certificate chain').fill('')
      await dialog.getByRole('button', { name: 'Save key chain' }).click()
      await dialog.waitFor({ state: 'hidden' })
      await page.getByText('every 30 days, grace 7 days').waitFor()
      const saved = await keys.getKeyChain('signing')
      expect(saved.rotationPolicy).toStrictEqual({ enabled: true, intervalDays: 30, gracePeriodDays: 7 })
      expect(saved.nextRotationAt).not.toBeNull()
    })

    it('imports a key chain from a private JWK and its certificate; the key is never shown back', async () => {
      const pair = await generateKeyPair('ES256')
      const other = await generateKeyPair('ES256')
      await page.goto(run.url('/key-chains'))
      await signIn(page, admin.id, admin.secret)
      await page.getByRole('button', { name: 'Import key chain' }).click()
      const dialog = page.getByRole('dialog', { name: 'Import key chain' })
      await expectAccessible(page, 'import key chain dialog')
      await dialog.getByLabel('Id', { exact: true }).fill('imported')
      await dialog.getByLabel('Private key').fill(JSON.stringify(pair.privateJwk))
      // A certificate of another key: the API's problem names body.certificateChain.
      await dialog.getByLabel('Certificate chain').fill(await selfSigned(other, 'CN=Imported key'))
      await dialog.getByRole('button', { name: 'Import key chain' }).click()
      await expect.poll(() => errorOf(page, dialog.getByLabel('Certificate chain'))).not.toBe('')
      const pem = await selfSigned(pair, 'CN=Imported key')
      await dialog.getByLabel('Certificate chain').fill(pem)
      await dialog.getByRole('button', { name: 'Import key chain' }).click()
      await page.getByRole('heading', { name: 'Key chain imported' }).waitFor()
      await page.getByText('CN=Imported key').first().waitFor()
      expect(await page.content()).not.toContain(pair.privateJwk.d as string)
      const saved = await keys.getKeyChain('imported')
      expect(saved.certificateMode).toBe('provided')
      expect(new X509Certificate(saved.activeKey.certificateChain[0] as string).fingerprint256).toBe(
        new X509Certificate(pem).fingerprint256,
      )
    })

    it('registers an external (Vault transit) key chain and rotates it to a new key', async () => {
      await vault.addKey('console-first')
      await vault.addKey('console-second')
      await page.goto(run.url('/key-chains'))
      await signIn(page, admin.id, admin.secret)
      await page.getByRole('button', { name: 'Register external key chain' }).click()
      const dialog = page.getByRole('dialog', { name: 'Register external key chain' })
      await expectAccessible(page, 'register external key chain dialog')
      await dialog.getByLabel('Id', { exact: true }).fill('in-vault')
      await dialog.getByLabel('External key id').fill('no-such-key')
      await dialog.getByRole('button', { name: 'Register key chain' }).click()
      // The API asks Vault, which knows no such key: its problem names body.externalKeyId.
      await expect.poll(() => errorOf(page, dialog.getByLabel('External key id'))).not.toBe('')
      await dialog.getByLabel('External key id').fill('console-first')
      await dialog.getByRole('button', { name: 'Register key chain' }).click()
      await page.getByRole('heading', { name: 'Key chain in-vault' }).waitFor()
      await page.getByText('vault (console-first)').waitFor()
      const before = await keys.getKeyChain('in-vault')

      await page.getByRole('button', { name: 'Rotate now' }).click()
      const rotate = page.getByRole('dialog', { name: 'Rotate key chain in-vault?' })
      await expectAccessible(page, 'rotate external key chain dialog')
      await rotate.getByLabel('New external key id').fill('console-second')
      await rotate.getByRole('button', { name: 'Rotate' }).click()
      await rotate.waitFor({ state: 'hidden' })
      await page.getByText('vault (console-second)').waitFor()
      const after = await keys.getKeyChain('in-vault')
      expect(after.externalKeyId).toBe('console-second')
      expect(after.activeKey.kid).not.toBe(before.activeKey.kid)
      expect(after.previousKey?.kid).toBe(before.activeKey.kid)
    })
  },
)
