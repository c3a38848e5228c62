import { generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import { createManagementClient, type ManagementClient } from '@credential-service/sdk'
import type { Page } from 'playwright-core'
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
 * The console's Federation page in Chromium (issue 39): the tenant's OpenID Federation membership
 * viewed, joined, edited and left. One server, one browser, one page: each case goes on from where
 * the one before left off.
 */
const skip = skipWithoutChromium('federation.test.ts')
const SUPERIOR = 'https://intermediate.federation.test'
const ANCHOR = 'https://anchor.federation.test'
const MARK = 'https://marks.federation.test/verified-rp'

const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
const decodeJwt = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>

describe.skipIf(skip)('console federation page in Chromium (issue 39, OpenID Federation 1.0)', () => {
  const root = { id: `root-${randomBytes(4).toString('hex')}`, secret: randomBytes(24).toString('base64url') }
  const tenant = `t-${randomBytes(4).toString('hex')}`
  const admin = { id: `${tenant}-fed`, secret: randomBytes(18).toString('base64url') }
  let harness: ConsoleUnderTest
  let page: Page
  let api: ManagementClient
  let verifierId: string
  let anchorJwks: string
  let trustMark: string

  beforeAll(async () => {
    harness = await startConsole(root)
    page = harness.page
    const operator = createManagementClient({
      baseUrl: harness.service.origin,
      clientId: root.id,
      clientSecret: root.secret,
    })
    await operator.createTenant({ id: tenant, name: 'Federation member' })
    await operator.createClientOfTenant(tenant, {
      clientId: admin.id,
      clientSecret: admin.secret,
      roles: ['registrar:manage', 'key:manage', 'issuance:config'],
    })
    api = createManagementClient({
      baseUrl: harness.service.origin,
      clientId: admin.id,
      clientSecret: admin.secret,
    })
    for (const id of ['keys', 'federation']) await api.createKeyChain({ source: 'generate', id })
    await api.createCredentialConfig({
      id: 'pid',
      config: { format: 'dc+sd-jwt', vct: 'urn:example:console:pid:1' },
      keyChainId: 'keys',
      fields: [{ path: ['given_name'], type: 'string', mandatory: true, disclosable: true }],
    })
    verifierId = `${harness.service.origin}/verifiers/${tenant}`
    // The anchor's keys and its trust mark about the verifier, made by the test (§7.1).
    const anchorKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    anchorJwks = JSON.stringify({
      keys: [{ ...anchorKey.publicKey.export({ format: 'jwk' }), kid: 'anchor-1', alg: 'ES256' }],
    })
    const input = `${part({ alg: 'ES256', kid: 'anchor-1', typ: 'trust-mark+jwt' })}.${part({
      iss: ANCHOR,
      sub: verifierId,
      trust_mark_type: MARK,
      iat: Math.floor(Date.now() / 1000),
    })}`
    const signature = sign('sha256', Buffer.from(input), {
      key: anchorKey.privateKey,
      dsaEncoding: 'ieee-p1363',
    })
    trustMark = `${input}.${signature.toString('base64url')}`
    await page.goto(harness.url('/federation'))
    await signIn(page, admin.id, admin.secret)
  }, 90_000)

  afterAll(async () => {
    await harness?.stop()
  })

  afterEach(async () => {
    for (let i = 0; i < 3 && (await page.getByRole('dialog').count()) > 0; i++)
      await page.keyboard.press('Escape')
  })

  const expectAccessible = (what: string) => expectAccessibleIn(page, what)
  const form = () => page.getByRole('form', { name: 'Federation membership' })
  const entityConfiguration = async (entityId: string) => {
    const answer = await fetch(`${entityId}/.well-known/openid-federation`)
    return { status: answer.status, type: answer.headers.get('content-type'), jwt: await answer.text() }
  }

  it('is in the navigation next to trust lists for a registrar:manage client; not a member yet; passes axe', async () => {
    await page.getByRole('heading', { name: `Federation of ${tenant}` }).waitFor()
    const links = await page
      .getByRole('navigation', { name: 'Console pages' })
      .getByRole('link')
      .allTextContents()
    expect(links).toContain('Federation')
    expect(links.indexOf('Federation')).toBe(links.indexOf('Trust lists') + 1)
    await page.getByText('Not a federation member').waitFor()
    await expectAccessible('federation page, not a member')
  })

  it('the key chain picker leaves out the key chain of a credential configuration; the API refuses it at the field (422)', async () => {
    const picker = form().getByLabel(/^Federation key chain/)
    await picker.click()
    await page.getByRole('option', { name: 'federation', exact: true }).waitFor()
    const options = await page.getByRole('option').allTextContents()
    expect(options).toContain('federation')
    expect(options).not.toContain('keys')
    await picker.fill('keys')
    await page.keyboard.press('Escape')
    await form()
      .getByLabel(/^Authority hints/)
      .fill(SUPERIOR)
    await form().getByRole('button', { name: 'Join federation' }).click()
    await expect.poll(() => errorOf(page, picker)).toContain('signs configurations (credential pid)')
    await expectAccessible('membership refused at the key chain')
    await expect(api.getFederationMembership()).rejects.toMatchObject({ status: 404 })
  })

  it('joins with hints, an anchor with its JWKS, a trust mark and a lifetime; shows both entity ids, linked to their entity configurations', async () => {
    await form()
      .getByLabel(/^Federation key chain/)
      .fill('federation')
    await page.keyboard.press('Escape')
    await form().getByRole('button', { name: 'Add trust anchor' }).click()
    await form()
      .getByLabel(/^Anchor 1 entity identifier/)
      .fill(ANCHOR)
    // A JWKS that is not JSON: the API's schema names the field in the browser, nothing is sent.
    await form()
      .getByLabel(/^Anchor 1 JWKS/)
      .fill('not json')
    await form().getByRole('button', { name: 'Join federation' }).click()
    await expect.poll(() => errorOf(page, form().getByLabel(/^Anchor 1 JWKS/))).not.toBe('')
    await form()
      .getByLabel(/^Anchor 1 JWKS/)
      .fill(anchorJwks)
    await form().getByRole('button', { name: 'Add trust mark' }).click()
    await form()
      .getByLabel(/^Trust mark 1 type/)
      .fill(MARK)
    await form()
      .getByLabel(/^Trust mark 1 JWT/)
      .fill(trustMark)
    await form()
      .getByLabel(/^Lifetime/)
      .fill('7200')
    await form()
      .getByLabel(/^Organization name/)
      .fill('Console Federation')
    await expectAccessible('membership form filled')
    await form().getByRole('button', { name: 'Join federation' }).click()
    const table = page.getByRole('table', { name: 'Federation entities' })
    await table.waitFor()
    expect(await api.getFederationMembership()).toMatchObject({
      keyChainId: 'federation',
      authorityHints: [SUPERIOR],
      trustAnchors: [{ entityId: ANCHOR, jwks: JSON.parse(anchorJwks) }],
      trustMarks: [{ trustMarkType: MARK, trustMark }],
      lifetimeSeconds: 7200,
      organizationName: 'Console Federation',
      entityIds: { verifier: verifierId },
    })
    const link = table.getByRole('link', { name: verifierId, exact: true })
    const href = (await link.getAttribute('href')) as string
    expect(href).toBe(`${verifierId}/.well-known/openid-federation`)
    const answer = await fetch(href)
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toBe('application/entity-statement+jwt')
    expect(decodeJwt(await answer.text())).toMatchObject({
      iss: verifierId,
      authority_hints: [SUPERIOR],
      trust_marks: [{ trust_mark_type: MARK, trust_mark: trustMark }],
    })
    expect(await table.getByRole('link').count()).toBe(2)
    await expectAccessible('federation member')
  })

  it('edits the membership: a trust mark removed, a second authority hint; the form shows the stored values', async () => {
    expect(
      await form()
        .getByLabel(/^Federation key chain/)
        .inputValue(),
    ).toBe('federation')
    await form().getByRole('button', { name: 'Remove trust mark 1' }).click()
    await form()
      .getByLabel(/^Authority hints/)
      .fill(`${SUPERIOR}\nhttps://second.federation.test`)
    await form().getByRole('button', { name: 'Save membership' }).click()
    await expect
      .poll(async () => (await api.getFederationMembership()).authorityHints)
      .toStrictEqual([SUPERIOR, 'https://second.federation.test'])
    expect((await api.getFederationMembership()).trustMarks).toStrictEqual([])
    expect(decodeJwt((await entityConfiguration(verifierId)).jwt).trust_marks).toBeUndefined()
  })

  it('leaves the federation after confirming; the entity configurations answer 404 again', async () => {
    await page.getByRole('button', { name: 'Leave federation' }).click()
    const dialog = page.getByRole('dialog', { name: 'Leave the federation?' })
    await expectAccessible('leave federation dialog')
    await dialog.getByRole('button', { name: 'Leave federation' }).click()
    await page.getByText('Not a federation member').waitFor()
    await expect(api.getFederationMembership()).rejects.toMatchObject({ status: 404 })
    expect((await entityConfiguration(verifierId)).status).toBe(404)
  })
})
