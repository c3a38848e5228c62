import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createManagementClient } from '@credential-service/sdk'
import type { Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ConsoleUnderTest, expectAccessible, signIn, skipWithoutChromium, startConsole } from './browser'

/**
 * Credential and presentation configurations in the console (issue 22), in Chromium against an
 * all-in-one: the field editor for SD-JWT VC and mdoc, the live JSON and derived schema, import
 * and export as config-import JSON, the DCQL builder and JSON mode, problems on their fields.
 */
describe.skipIf(skipWithoutChromium('configs.test.ts'))('configurations in the console', () => {
  const root = { id: `root-${randomBytes(4).toString('hex')}`, secret: randomBytes(24).toString('base64url') }
  const tenant = `t-${randomBytes(4).toString('hex')}`
  const admin = { id: `${tenant}-configs`, secret: randomBytes(18).toString('base64url') }
  let run: ConsoleUnderTest
  let page: Page
  let api: ReturnType<typeof createManagementClient>

  beforeAll(async () => {
    run = await startConsole(root)
    page = run.page
    const operator = createManagementClient({
      baseUrl: run.service.origin,
      clientId: root.id,
      clientSecret: root.secret,
    })
    await operator.createTenant({ id: tenant, name: 'Configurations' })
    await operator.createClientOfTenant(tenant, {
      clientId: admin.id,
      clientSecret: admin.secret,
      roles: ['key:manage', 'issuance:config', 'presentation:config'],
    })
    api = createManagementClient({
      baseUrl: run.service.origin,
      clientId: admin.id,
      clientSecret: admin.secret,
    })
    // mso_mdoc needs a country in the certificate (ISO 18013-5 Annex B.1); the other key chain has none.
    await api.createKeyChain({
      source: 'generate',
      id: 'signing',
      certificate: { mode: 'internal-ca', country: 'DE' },
    })
    await api.createKeyChain({ source: 'generate', id: 'no-country' })
    await page.goto(run.url('/credential-configs'))
    await signIn(page, admin.id, admin.secret)
  }, 90_000)

  afterAll(() => run?.stop())

  const field = (n: number) => page.getByRole('group', { name: new RegExp(`^Field ${n}:`) })
  const pick = async (label: string, option: string, within: Page | Locator = page) => {
    await within.getByLabel(label, { exact: true }).click()
    await page.getByRole('option', { name: option, exact: true }).click()
  }
  const liveJson = async (testId: string) => JSON.parse((await page.getByTestId(testId).textContent()) ?? '')

  it('creates an SD-JWT VC configuration with the field editor, beside its live JSON and schema', async () => {
    await page.getByRole('heading', { name: `Credential configurations of ${tenant}` }).waitFor()
    await expectAccessible(page, 'credential configurations page')
    await page.getByRole('link', { name: 'New credential configuration' }).click()
    await page.getByLabel('Id', { exact: false }).first().fill('employee')
    await page.getByLabel('Verifiable credential type (vct)').fill('urn:example:employee')
    await field(1).getByLabel('Path').fill('name')
    await field(1).getByRole('checkbox', { name: 'Mandatory' }).check()
    await field(1).getByRole('button', { name: 'Add label' }).click()
    await field(1).getByLabel('Locale of label 1', { exact: true }).fill('en')
    await field(1).getByLabel('Label 1', { exact: true }).fill('Name')
    await page.getByRole('button', { name: 'Add field' }).click()
    await field(2).getByLabel('Path').fill('address.locality')
    // Issue 42 item 3: a new field is mandatory by default; these two are optional.
    expect(await field(2).getByRole('checkbox', { name: 'Mandatory' }).isChecked()).toBe(true)
    await field(2).getByRole('checkbox', { name: 'Mandatory' }).uncheck()
    await page.getByRole('button', { name: 'Add field' }).click()
    await field(3).getByLabel('Path').fill('level')
    await pick('Type', 'integer', field(3))
    await field(3).getByRole('checkbox', { name: 'Mandatory' }).uncheck()
    await field(3)
      .getByRole('checkbox', { name: /^Disclosable/ })
      .uncheck()
    await field(3).getByLabel('Default value').fill('3')
    await page.getByRole('combobox', { name: 'Key chain' }).fill('signing')
    await page.keyboard.press('Escape')
    const expected = {
      id: 'employee',
      config: { format: 'dc+sd-jwt', vct: 'urn:example:employee' },
      fields: [
        {
          path: ['name'],
          type: 'string',
          mandatory: true,
          disclosable: true,
          display: [{ name: 'Name', locale: 'en' }],
        },
        { path: ['address', 'locality'], type: 'string', disclosable: true },
        { path: ['level'], type: 'integer', defaultValue: 3 },
      ],
      keyChainId: 'signing',
    }
    expect(await liveJson('config-json')).toMatchObject(expected)
    await page.getByRole('tab', { name: 'Derived JSON Schema' }).click()
    const schema = await liveJson('config-schema')
    expect(schema).toMatchObject({
      type: 'object',
      properties: {
        name: { type: 'string' },
        address: { type: 'object', properties: { locality: { type: 'string' } } },
        level: { type: 'integer' },
      },
      required: ['name'],
    })
    await expectAccessible(page, 'credential configuration editor')
    await page.getByRole('button', { name: 'Create configuration' }).click()
    await page.getByRole('link', { name: 'employee', exact: true }).waitFor()
    expect(await api.getCredentialConfig('employee')).toMatchObject(expected)
  })

  it('creates an mdoc configuration; the key chain the API refuses is named on its input', async () => {
    await page.getByRole('link', { name: 'New credential configuration' }).click()
    await page.getByLabel('Id', { exact: false }).first().fill('mdl')
    await page.getByText('mdoc (mso_mdoc)').click()
    await page.getByLabel('Document type (docType)').fill('org.iso.18013.5.1.mDL')
    await field(1).getByLabel('Path').fill('family_name')
    await field(1).getByLabel('Namespace').fill('org.iso.18013.5.1')
    await field(1).getByRole('checkbox', { name: 'Mandatory' }).check()
    await page.getByRole('button', { name: 'Add field' }).click()
    // The new row takes the namespace of the one before.
    expect(await field(2).getByLabel('Namespace').inputValue()).toBe('org.iso.18013.5.1')
    await field(2).getByLabel('Path').fill('age_over_18')
    await pick('Type', 'boolean', field(2))
    await field(2).getByLabel('Default value').fill('true')
    // In the browser (checkCredentialConfig): an mdoc field without a namespace never leaves it.
    await field(2).getByLabel('Namespace').fill('')
    await page.getByRole('combobox', { name: 'Key chain' }).fill('no-country')
    await page.keyboard.press('Escape')
    await page.getByRole('button', { name: 'Create configuration' }).click()
    const namespace = field(2).getByLabel('Namespace')
    await expect.poll(() => namespace.getAttribute('aria-invalid')).toBe('true')
    await field(2).getByLabel('Namespace').fill('org.iso.18013.5.1')
    // Only the API knows the key chain's certificate: 422 naming body.keyChainId, shown on it.
    await page.getByRole('button', { name: 'Create configuration' }).click()
    const keyChain = page.getByRole('combobox', { name: 'Key chain' })
    await expect.poll(() => keyChain.getAttribute('aria-invalid')).toBe('true')
    // Under the key chain input (Mantine's error element follows the input in its wrapper).
    await page
      .locator('.mantine-Autocomplete-root', { has: keyChain })
      .getByText(/mso_mdoc needs a country \(C=\)/)
      .waitFor()
    await expectAccessible(page, 'editor with a problem')
    await keyChain.fill('signing')
    await page.keyboard.press('Escape')
    await page.getByRole('button', { name: 'Create configuration' }).click()
    await page.getByRole('link', { name: 'mdl', exact: true }).waitFor()
    expect(await api.getCredentialConfig('mdl')).toMatchObject({
      config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
      fields: [
        {
          path: ['family_name'],
          type: 'string',
          mandatory: true,
          disclosable: true,
          namespace: 'org.iso.18013.5.1',
        },
        {
          path: ['age_over_18'],
          type: 'boolean',
          disclosable: true,
          namespace: 'org.iso.18013.5.1',
          defaultValue: true,
        },
      ],
    })
  })

  it('creates a jwt_vc_json configuration: the VC types and @context are tag inputs from its format spec; a type list the schema refuses is named on its input', async () => {
    await page.getByRole('link', { name: 'New credential configuration' }).click()
    await page.getByLabel('Id', { exact: false }).first().fill('degree')
    await page.getByText('W3C VC (JWT) (jwt_vc_json)').click()
    const types = page.getByRole('combobox', { name: 'VC types (type)' })
    await types.fill('UniversityDegreeCredential')
    await page.keyboard.press('Enter')
    await field(1).getByLabel('Path').fill('credentialSubject.degree')
    // A VC-JWT is presented whole: no disclosable checkbox (FormatSpec.selectiveDisclosure).
    expect(
      await field(1)
        .getByRole('checkbox', { name: /Disclosable/ })
        .count(),
    ).toBe(0)
    await page.getByRole('combobox', { name: 'Key chain' }).fill('signing')
    await page.keyboard.press('Escape')
    // VCDM 2.0 §4.5: "one value of the type property MUST be VerifiableCredential" (the domain schema, in the browser).
    await page.getByRole('button', { name: 'Create configuration' }).click()
    await expect.poll(() => types.getAttribute('aria-invalid')).toBe('true')
    await page.getByText('the type must include VerifiableCredential').waitFor()
    await types.fill('VerifiableCredential')
    await page.keyboard.press('Enter')
    const context = page.getByRole('combobox', { name: '@context' })
    await context.fill('https://www.w3.org/ns/credentials/examples/v2')
    await page.keyboard.press('Enter')
    expect(await liveJson('config-json')).toMatchObject({
      config: {
        format: 'jwt_vc_json',
        type: ['UniversityDegreeCredential', 'VerifiableCredential'],
        context: ['https://www.w3.org/ns/credentials/examples/v2'],
      },
    })
    await expectAccessible(page, 'jwt_vc_json configuration editor')
    await page.getByRole('button', { name: 'Create configuration' }).click()
    await page.getByRole('link', { name: 'degree', exact: true }).waitFor()
    expect(await api.getCredentialConfig('degree')).toMatchObject({
      config: {
        format: 'jwt_vc_json',
        type: ['UniversityDegreeCredential', 'VerifiableCredential'],
        context: ['https://www.w3.org/ns/credentials/examples/v2'],
      },
      fields: [{ path: ['credentialSubject', 'degree'], type: 'string' }],
    })
  })

  it('exports a configuration as config-import JSON and imports it into a new one', async () => {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export employee' }).click(),
    ])
    expect(download.suggestedFilename()).toBe('employee.json')
    const exported = JSON.parse(readFileSync((await download.path()) as string, 'utf8'))
    const { createdAt: _c, updatedAt: _u, ...definition } = await api.getCredentialConfig('employee')
    expect(exported).toStrictEqual(definition)
    // As config:import reads it: the id from the file name.
    const { id: _id, ...withoutId } = exported
    const file = join(tmpdir(), `${tenant}-employee-copy.json`)
    writeFileSync(file, JSON.stringify({ ...withoutId, description: 'Imported' }))
    await page.getByRole('link', { name: 'New credential configuration' }).click()
    const chooser = page.waitForEvent('filechooser')
    await page.getByRole('button', { name: 'Import JSON' }).click()
    await (await chooser).setFiles(file)
    await expect
      .poll(() => page.getByLabel('Id', { exact: false }).first().inputValue())
      .toBe(`${tenant}-employee-copy`)
    expect(await liveJson('config-json')).toMatchObject({ ...withoutId, description: 'Imported' })
    await page.getByRole('button', { name: 'Create configuration' }).click()
    await page.getByRole('link', { name: `${tenant}-employee-copy`, exact: true }).waitFor()
  })

  it('deletes a configuration after confirmation', async () => {
    await page.getByRole('button', { name: `Delete ${tenant}-employee-copy` }).click()
    const confirm = page.getByRole('dialog', {
      name: `Delete credential configuration ${tenant}-employee-copy?`,
    })
    await confirm.getByRole('button', { name: 'Delete' }).click()
    await confirm.waitFor({ state: 'hidden' })
    await page
      .getByRole('link', { name: `${tenant}-employee-copy`, exact: true })
      .waitFor({ state: 'detached' })
    await expect(api.getCredentialConfig(`${tenant}-employee-copy`)).rejects.toMatchObject({ status: 404 })
  })

  it('creates a presentation configuration with the DCQL builder, checked as it changes', async () => {
    await page
      .getByRole('navigation', { name: 'Console pages' })
      .getByRole('link', { name: 'Presentation configurations' })
      .click()
    await page.getByRole('heading', { name: `Presentation configurations of ${tenant}` }).waitFor()
    await expectAccessible(page, 'presentation configurations page')
    await page.getByRole('link', { name: 'New presentation configuration' }).click()
    await page.getByLabel('Id', { exact: false }).first().fill('age-check')
    await page.getByRole('button', { name: 'Add credential query' }).click()
    const first = page.getByRole('group', { name: 'Credential query 1' })
    await pick('Credential configuration', 'employee (dc+sd-jwt)', first)
    await first.getByRole('checkbox', { name: 'address.locality' }).check()
    await page.getByRole('button', { name: 'Add credential query' }).click()
    const second = page.getByRole('group', { name: 'Credential query 2' })
    await pick('Credential configuration', 'mdl (mso_mdoc)', second)
    await second.getByRole('checkbox', { name: 'org.iso.18013.5.1 / age_over_18' }).check()
    await second.getByRole('checkbox', { name: 'Intent to retain age_over_18' }).check()
    await page.getByRole('combobox', { name: 'Key chain' }).fill('signing')
    await page.keyboard.press('Escape')
    const dcql = {
      credentials: [
        {
          id: 'employee',
          format: 'dc+sd-jwt',
          meta: { vct_values: ['urn:example:employee'] },
          claims: [{ path: ['address', 'locality'] }],
        },
        {
          id: 'mdl',
          format: 'mso_mdoc',
          meta: { doctype_value: 'org.iso.18013.5.1.mDL' },
          claims: [{ path: ['org.iso.18013.5.1', 'age_over_18'], intent_to_retain: true }],
        },
      ],
    }
    expect((await liveJson('presentation-json')).dcqlQuery).toStrictEqual(dcql)
    expect(await page.getByTestId('dcql-status').textContent()).toContain(
      'Valid DCQL query: 2 credential queries',
    )
    await expectAccessible(page, 'DCQL builder')

    // The JSON mode: checked with zDcqlQuery and checkDcqlQuery as it is typed.
    await page.getByText('Edit JSON').click()
    const text = page.getByRole('textbox', { name: 'DCQL JSON' })
    expect(JSON.parse(await text.inputValue())).toStrictEqual(dcql)
    const broken = {
      credentials: [dcql.credentials[0], { ...dcql.credentials[1], claims: [{ path: ['age_over_18'] }] }],
    }
    await text.fill(JSON.stringify(broken))
    expect(await page.getByTestId('dcql-status').textContent()).toContain(
      'credentials.1.claims.0.path: mso_mdoc claim paths are exactly [namespace, element identifier]',
    )
    await expectAccessible(page, 'DCQL JSON mode with a problem')
    // A query with claim values is beyond the builder: it stays in the JSON mode, unchanged.
    const withValues = {
      credentials: [
        { ...dcql.credentials[0], claims: [{ path: ['name'], values: ['Erika'] }] },
        dcql.credentials[1],
      ],
    }
    await text.fill(JSON.stringify(withValues, null, 2))
    await page.getByText('Pick claims').click()
    await page.getByText('The builder cannot show this query whole').waitFor()
    await text.fill(JSON.stringify(dcql, null, 2))
    await page.getByText('Pick claims').click()
    expect(
      await page
        .getByRole('group', { name: 'Credential query 2' })
        .getByRole('checkbox', { name: 'Intent to retain age_over_18' })
        .isChecked(),
    ).toBe(true)

    await page.getByRole('button', { name: 'Create configuration' }).click()
    await page.getByRole('link', { name: 'age-check', exact: true }).waitFor()
    expect(await api.getPresentationConfig('age-check')).toMatchObject({
      id: 'age-check',
      dcqlQuery: dcql,
      keyChainId: 'signing',
    })
  })

  it('edits a presentation configuration: the builder opens with its picks; a 4xx lands on its field', async () => {
    await page.getByRole('link', { name: 'age-check', exact: true }).click()
    const second = page.getByRole('group', { name: 'Credential query 2' })
    expect(await second.getByRole('checkbox', { name: 'org.iso.18013.5.1 / age_over_18' }).isChecked()).toBe(
      true,
    )
    // A key chain the tenant does not have: only the API knows (422 body.keyChainId).
    await page.getByRole('combobox', { name: 'Key chain' }).fill('missing')
    await page.keyboard.press('Escape')
    await page.getByRole('button', { name: 'Save configuration' }).click()
    const keyChain = page.getByRole('combobox', { name: 'Key chain' })
    await expect.poll(() => keyChain.getAttribute('aria-invalid')).toBe('true')
    await keyChain.fill('signing')
    await page.keyboard.press('Escape')
    await page.getByLabel('Description').fill('Over 18')
    await page.getByRole('button', { name: 'Save configuration' }).click()
    await page.getByRole('table').getByText('Over 18').waitFor()
  })

  it('Digital Credentials API: origins and protocols in order, problems on their inputs, kept when loaded again', async () => {
    await page.getByRole('link', { name: 'age-check', exact: true }).click()
    const section = page.getByRole('group', { name: 'Digital Credentials API' })
    const origins = section.getByLabel('Allowed origins', { exact: true })
    const protocols = section.getByLabel('Protocols', { exact: true })
    expect(await liveJson('presentation-json')).not.toHaveProperty('dcApi')
    for (const origin of ['https://shop.example', 'http://shop.example:8080']) {
      await origins.fill(origin)
      await origins.press('Enter')
    }
    // The selection order is the order of preference.
    await protocols.click()
    for (const protocol of ['org-iso-mdoc', 'openid4vp-v1-unsigned'])
      await page.getByRole('option', { name: protocol, exact: true }).click()
    await page.keyboard.press('Escape')
    expect((await liveJson('presentation-json')).dcApi).toStrictEqual({
      protocols: ['org-iso-mdoc', 'openid4vp-v1-unsigned'],
      origins: ['https://shop.example', 'http://shop.example:8080'],
    })
    // The query asks for two credentials: no Annex C request fits it (checkDcApiSettings, in the page).
    await page.getByRole('button', { name: 'Save configuration' }).click()
    await section.getByText(/^org-iso-mdoc: ISO\/IEC 18013-7 Annex C asks for one mdoc/).waitFor()
    // The input's frame, drawn as invalid, lies over it: the click is the frame's.
    await protocols.click({ force: true })
    for (const protocol of ['org-iso-mdoc', 'openid4vp-v1-signed'])
      await page.getByRole('option', { name: protocol, exact: true }).click()
    await page.keyboard.press('Escape')
    // http origins are the service's to allow (OUTBOUND_ALLOW_HTTP): a 422 at body.dcApi.origins.1.
    await page.getByRole('button', { name: 'Save configuration' }).click()
    await section.getByText('http://shop.example:8080: must use https').waitFor()
    expect(await origins.getAttribute('aria-invalid')).toBe('true')
    expect(await protocols.getAttribute('aria-invalid')).not.toBe('true')
    await expectAccessible(page, 'Digital Credentials API settings refused')
    await origins.press('Backspace')
    await origins.fill('https://shop.example:8443')
    await origins.press('Enter')
    await section.getByText('http://shop.example:8080: must use https').waitFor({ state: 'detached' })
    await page.getByRole('button', { name: 'Save configuration' }).click()
    await page.getByRole('heading', { name: `Presentation configurations of ${tenant}` }).waitFor()
    const dcApi = {
      protocols: ['openid4vp-v1-unsigned', 'openid4vp-v1-signed'],
      origins: ['https://shop.example', 'https://shop.example:8443'],
    }
    expect((await api.getPresentationConfig('age-check')).dcApi).toStrictEqual(dcApi)

    // Loaded again (a new page load and sign-in): the inputs show what the API holds.
    await page.goto(run.url('/presentation-configs/age-check/edit'))
    await signIn(page, admin.id, admin.secret)
    await page.getByRole('heading', { name: 'Presentation configuration age-check' }).waitFor()
    for (const origin of dcApi.origins) await section.getByText(origin, { exact: true }).waitFor()
    for (const protocol of dcApi.protocols) await section.getByText(protocol, { exact: true }).waitFor()
    expect((await liveJson('presentation-json')).dcApi).toStrictEqual(dcApi)
    await expectAccessible(page, 'presentation configuration with Digital Credentials API settings')
    // Saved without a change: the same dcApi goes back.
    await page.getByRole('button', { name: 'Save configuration' }).click()
    await page.getByRole('heading', { name: `Presentation configurations of ${tenant}` }).waitFor()
    expect((await api.getPresentationConfig('age-check')).dcApi).toStrictEqual(dcApi)
  })

  it('deletes a presentation configuration after confirmation', async () => {
    await page.getByRole('button', { name: 'Delete' }).click()
    await page
      .getByRole('dialog', { name: 'Delete presentation configuration age-check?' })
      .getByRole('button', { name: 'Delete' })
      .click()
    await page.getByText('No presentation configuration yet.').waitFor()
  })

  it('issue 22: no page broke the Content-Security-Policy', () => {
    expect(run.policyViolations).toStrictEqual([])
  })
})
