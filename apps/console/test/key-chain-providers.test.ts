import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { startFakeAzureKeyVault, startFakeGcpKms } from '@credential-service/crypto/testing'
import { createManagementClient } from '@credential-service/sdk'
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

const RING = 'projects/console/locations/europe-west3/keyRings/issuer'

/**
 * The import form's "Key kept in" choice (issue 40), in Chromium against an all-in-one whose Azure
 * Key Vault and Cloud KMS are the local implementations of their wire protocols: the key is
 * imported into the provider chosen, the key chain page shows it there, and the private key is
 * never shown back.
 */
describe.skipIf(skipWithoutChromium('key-chain-providers.test.ts'))(
  'importing a key chain into a cloud key provider in the console',
  () => {
    const root = {
      id: `root-${randomBytes(4).toString('hex')}`,
      secret: randomBytes(24).toString('base64url'),
    }
    const tenant = `t-${randomBytes(4).toString('hex')}`
    const admin = { id: `${tenant}-admin`, secret: randomBytes(18).toString('base64url') }
    const azureCredentials = {
      tenantId: 'entra-tenant',
      clientId: 'console-app',
      clientSecret: randomBytes(18).toString('base64url'),
    }
    let azure: Awaited<ReturnType<typeof startFakeAzureKeyVault>>
    let gcp: Awaited<ReturnType<typeof startFakeGcpKms>>
    let run: ConsoleUnderTest
    let page: Page
    let keys: ReturnType<typeof createManagementClient>

    beforeAll(async () => {
      azure = await startFakeAzureKeyVault(azureCredentials)
      gcp = await startFakeGcpKms()
      run = await startConsole(root, {
        AZURE_KEY_VAULT_URL: azure.url,
        AZURE_AUTHORITY_HOST: azure.url,
        AZURE_TENANT_ID: azureCredentials.tenantId,
        AZURE_CLIENT_ID: azureCredentials.clientId,
        AZURE_CLIENT_SECRET: azureCredentials.clientSecret,
        GCP_KMS_CREDENTIALS: 'env:TEST_GCP_SERVICE_ACCOUNT',
        TEST_GCP_SERVICE_ACCOUNT: JSON.stringify(gcp.serviceAccount),
        GCP_KMS_ENDPOINT: gcp.endpoint,
        GCP_KMS_KEY_RING: RING,
      })
      page = run.page
      const operator = createManagementClient({
        baseUrl: run.service.origin,
        clientId: root.id,
        clientSecret: root.secret,
      })
      await operator.createTenant({ id: tenant, name: 'Cloud keys' })
      await operator.createClientOfTenant(tenant, {
        clientId: admin.id,
        clientSecret: admin.secret,
        roles: ['tenant:admin', 'key:manage'],
      })
      keys = createManagementClient({
        baseUrl: run.service.origin,
        clientId: admin.id,
        clientSecret: admin.secret,
      })
      await page.goto(run.url('/key-chains'))
      await signIn(page, admin.id, admin.secret)
    }, 90_000)

    afterAll(async () => {
      await run?.stop()
      await azure?.close()
      await gcp?.close()
    })

    /** Opens the import dialog with the provider chosen under "Key kept in". */
    async function importDialog(option: string) {
      await page.goto(run.url('/key-chains'))
      await page.getByRole('button', { name: 'Import key chain' }).click()
      const dialog = page.getByRole('dialog', { name: 'Import key chain' })
      await dialog.getByLabel('Key kept in').click()
      await page.getByRole('option', { name: option }).click()
      expect(await dialog.getByLabel('Key kept in').inputValue()).toBe(option)
      return dialog
    }

    for (const [kmsProvider, option] of [
      ['azure-key-vault', 'Azure Key Vault'],
      ['gcp-kms', 'Google Cloud KMS (HSM)'],
    ] as const) {
      it(`"Key kept in" ${option}: the key is imported there and the key chain shows it; the key is never shown back`, async () => {
        const id = `in-${kmsProvider}`
        const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' })
        const dialog = await importDialog(option)
        await expectAccessible(page, `import key chain dialog (${option})`)
        await dialog.getByLabel('Id', { exact: true }).fill(id)
        await dialog.getByLabel('Private key').fill(JSON.stringify(jwk))
        await dialog.getByRole('button', { name: 'Import key chain' }).click()
        await page.getByRole('heading', { name: `Key chain ${id}` }).waitFor()
        await page.getByText(`${kmsProvider} (`).first().waitFor()
        await expectAccessible(page, `key chain page (${option})`)
        expect(await page.content()).not.toContain(jwk.d as string)

        const saved = await keys.getKeyChain(id)
        expect(saved.kmsProvider).toBe(kmsProvider)
        expect(saved.activeKey.publicJwk).toMatchObject({ crv: 'P-256', x: jwk.x, y: jwk.y })
        expect(await page.getByText(`${kmsProvider} (${saved.externalKeyId})`).count()).toBeGreaterThan(0)
        const made = kmsProvider === 'gcp-kms' ? gcp.imported : azure.imported
        expect(made.length).toBe(1)
      })
    }

    it('an Ed25519 key for Cloud KMS: the API refuses it, shown at "Private key"; nothing is made', async () => {
      const ed = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' })
      const dialog = await importDialog('Google Cloud KMS (HSM)')
      await dialog.getByLabel('Id', { exact: true }).fill('ed-in-gcp')
      await dialog.getByLabel('Private key').fill(JSON.stringify(ed))
      await dialog.getByRole('button', { name: 'Import key chain' }).click()
      await expect.poll(() => errorOf(page, dialog.getByLabel('Private key'))).toContain('P-256 and P-384')
      await expectAccessible(page, 'import key chain dialog with the refusal')
      // The key stays in its box for a correction; the refusal does not repeat it.
      expect(await errorOf(page, dialog.getByLabel('Private key'))).not.toContain(ed.d as string)
      expect(gcp.imported.length).toBe(1)
    })
  },
)
