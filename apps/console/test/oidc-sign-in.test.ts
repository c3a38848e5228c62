import { randomBytes } from 'node:crypto'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type KeycloakStandIn, startKeycloakStandIn } from '../../management/test/oidc/keycloak-stand-in'
import {
  type ConsoleUnderTest,
  expectAccessible,
  openTab,
  skipWithoutChromium,
  startConsole,
} from './browser'

/**
 * The console in external OIDC mode (issue 22, docs/oidc-mode.md): with CONSOLE_OIDC_CLIENT_ID it
 * signs in at the provider's login, authorization code + PKCE S256 as a public client, against
 * the in-process Keycloak stand-in (its login form, oidc-provider underneath). Issue 42: the
 * management process exchanges the code and keeps the provider's tokens (backend-for-frontend);
 * the page holds an HttpOnly cookie and never a token; a reload keeps the session, the access
 * token is renewed at the provider with the refresh token before it expires, sign-out ends it.
 * State and verifier live in sessionStorage only for the round trip.
 */
describe.skipIf(skipWithoutChromium('oidc-sign-in.test.ts'))('console sign-in in OIDC mode', () => {
  const consoleClientId = 'credential-service-console'
  const user = { username: 'olivia', password: randomBytes(12).toString('base64url') }
  /** A tenant's admin: the provider maps the user's tenant attribute and roles into the token. */
  const tenantAdmin = { username: 'tara', password: randomBytes(12).toString('base64url') }
  const tenant = `t-${randomBytes(4).toString('hex')}`
  let standIn: KeycloakStandIn
  let run: ConsoleUnderTest
  let page: Page
  /** Access tokens the provider's token endpoint answered to the page. */
  const tokens: string[] = []

  beforeAll(async () => {
    // Access tokens of 62 s: the service renews them a minute before, so within seconds here.
    standIn = await startKeycloakStandIn({ accessTokenTtlSeconds: 62 })
    run = await startConsole(
      { id: `root-${randomBytes(4).toString('hex')}`, secret: randomBytes(24).toString('base64url') },
      {
        OIDC: standIn.issuer,
        OIDC_CLIENT_ID: standIn.adminClientId,
        OIDC_CLIENT_SECRET: standIn.adminClientSecret,
        CONSOLE_OIDC_CLIENT_ID: consoleClientId,
      },
    )
    page = run.page
    // Keycloak's side: the console's public client and an operator user (roles and no tenant).
    standIn.addPublicClient({
      clientId: consoleClientId,
      redirectUris: [`${run.service.origin}/console/`],
      audience: `${run.service.origin}/api`,
    })
    standIn.addUser({ ...user, claims: { roles: ['tenant:manage'] } })
    // Her tenant is created by the operator below, before she signs in (checklist S-108).
    standIn.addUser({ ...tenantAdmin, claims: { tenant_id: tenant, roles: ['tenant:admin', 'key:manage'] } })
    page.on('response', async (response) => {
      if (response.url() === `${standIn.issuer}/protocol/openid-connect/token` && response.ok())
        tokens.push(((await response.json()) as { access_token: string }).access_token)
    })
  }, 90_000)

  afterAll(async () => {
    await run?.stop()
    await standIn?.close()
  })

  /**
   * The tenant as the page's session reads it (the list's first page may not show it on a shared
   * database): the API answers the session's cookie and CSRF header.
   */
  const tenantThroughSession = () =>
    page.evaluate(async (id) => {
      const view = (await (await fetch('/console/session')).json()) as { csrfToken: string }
      return (await fetch(`/api/tenants/${id}`, { headers: { 'x-console-csrf': view.csrfToken } })).status
    }, tenant)

  /** The token requests of console users at the provider (not the service's own client credentials). */
  const userGrants = () => standIn.grants.filter((grant) => grant !== 'client_credentials')

  /** Everything the page keeps outside its memory: storage, cookies, address. */
  const kept = () =>
    page.evaluate(() => {
      // The page's globals: this file is typechecked for Node, without the DOM's.
      const { document, location } = globalThis as unknown as {
        document: { cookie: string }
        location: { href: string }
      }
      return {
        local: Object.entries({ ...localStorage }),
        session: Object.entries({ ...sessionStorage }),
        cookies: document.cookie,
        url: location.href,
      }
    })

  it('serves the sign-in mode, and a policy that lets the page reach its own origin only (the service talks to the provider)', async () => {
    const response = await fetch(run.url('/config.json'))
    expect(await response.json()).toStrictEqual({
      mode: 'oidc',
      issuer: standIn.issuer,
      clientId: consoleClientId,
      authorizationEndpoint: `${standIn.issuer}/protocol/openid-connect/auth`,
      tokenEndpoint: `${standIn.issuer}/protocol/openid-connect/token`,
      tenantClaim: 'tenant_id',
      rolesClaim: 'roles',
    })
    const index = await fetch(run.url('/tenants'))
    expect(index.headers.get('content-security-policy')).toContain(`connect-src 'self';`)
  })

  it('RFC 7636: signs in at the provider with PKCE S256 and comes back to the page it left', async () => {
    await page.goto(run.url('/tenants'))
    const leave = page.getByRole('button', { name: 'Sign in with the identity provider' })
    await leave.waitFor()
    await expectAccessible(page, 'OIDC sign-in page')
    await leave.click()
    await page.getByRole('button', { name: 'Sign In' }).waitFor()
    expect(page.url().startsWith(`${standIn.baseUrl}/realms/${standIn.realm}/`)).toBe(true)

    const asked = standIn.authorizationRequests.at(-1)
    expect(asked?.get('response_type')).toBe('code')
    expect(asked?.get('client_id')).toBe(consoleClientId)
    expect(asked?.get('redirect_uri')).toBe(`${run.service.origin}/console/`)
    expect(asked?.get('code_challenge_method')).toBe('S256')
    // A SHA-256, base64url without padding; the verifier never leaves the console's origin.
    expect(asked?.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(asked?.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect([...(asked?.keys() ?? [])]).not.toContain('code_verifier')

    await page.getByLabel('Username or email').fill(user.username)
    await page.getByLabel('Password').fill('not-the-password')
    await page.getByRole('button', { name: 'Sign In' }).click()
    await page.getByText('Invalid username or password.').waitFor()
    await page.getByLabel('Username or email').fill(user.username)
    await page.getByLabel('Password').fill(user.password)
    await page.getByRole('button', { name: 'Sign In' }).click()

    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    await page.getByRole('heading', { name: 'Tenants' }).waitFor()
    expect(page.url()).toBe(run.url('/tenants'))
    expect(await page.getByTestId('signed-in-as').textContent()).toBe(user.username)
    expect(
      await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link').allTextContents(),
    ).toStrictEqual(['Tenants', 'API clients', 'Issuer branding', 'Audit events', 'Health and version'])
    expect(run.policyViolations).toStrictEqual([])
  })

  it('issue 42: the page never sees a token (the service exchanged the code); nothing in storage, script-readable cookies or the URL; the API accepts the session', async () => {
    expect(tokens).toStrictEqual([])
    expect(userGrants()).toStrictEqual(['authorization_code'])
    const state = await kept()
    expect(state.local).toStrictEqual([])
    // The pending state and verifier were deleted as the answer came back.
    expect(state.session).toStrictEqual([])
    // The session cookie is HttpOnly: page scripts see none.
    expect(state.cookies).toBe('')
    const cookies = await page.context().cookies()
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toContainEqual([
      '__Secure-console-session',
      true,
      'Strict',
    ])
    expect(state.url).toBe(run.url('/tenants'))
    expect(page.url()).not.toMatch(/[?&](code|state|iss)=/)

    // The service checks the provider's token (iss, aud, roles): an operator creates a tenant.
    await page.getByRole('button', { name: 'Create tenant' }).click()
    const dialog = page.getByRole('dialog', { name: 'Create tenant' })
    await dialog.getByLabel('Id', { exact: true }).fill(tenant)
    await dialog.getByLabel('Name').fill('Made through the provider token')
    await dialog.getByRole('button', { name: 'Create tenant' }).click()
    await dialog.waitFor({ state: 'hidden' })
    expect(await tenantThroughSession()).toBe(200)
  })

  it('issue 42: a reload and a deep link keep the session; the access token is renewed at the provider before it expires, silently', async () => {
    await page.reload()
    await page.getByRole('heading', { name: 'Tenants' }).waitFor()
    expect(await page.getByTestId('signed-in-as').textContent()).toBe(user.username)
    // A deep link opens signed in.
    await page.goto(run.url('/audit-events'))
    await page.getByRole('heading', { name: 'Audit events' }).waitFor()
    await page.goto(run.url('/tenants'))
    // Past the renewal point (a minute before the 62 s token expires): the next API call renews.
    await new Promise((resolve) => setTimeout(resolve, 3000))
    await page.reload()
    await page.getByRole('heading', { name: 'Tenants' }).waitFor()
    expect(await tenantThroughSession()).toBe(200)
    expect(userGrants()).toContain('refresh_token')
    expect(userGrants().filter((grant) => grant === 'authorization_code')).toHaveLength(1)
    expect(tokens).toStrictEqual([])
  })

  it('issue 42: a new tab opens signed in at a deep link; signing out ends the session at the service and signs the other tabs out (one at once, one that hears nothing at its next action); a reload does not bring it back', async () => {
    const signInButton = (tab: Page) =>
      tab.getByRole('button', { name: 'Sign in with the identity provider' })
    const other = await openTab(run.context, run.url('/audit-events'))
    const deaf = await openTab(run.context, run.url('/tenants'), { deaf: true })
    await other.getByRole('heading', { name: 'Audit events' }).waitFor()
    await deaf.getByRole('heading', { name: 'Tenants' }).waitFor()
    for (const tab of [other, deaf])
      expect(await tab.getByTestId('signed-in-as').textContent()).toBe(user.username)
    // The tabs joined the session: no new sign-in at the provider.
    expect(userGrants().filter((grant) => grant === 'authorization_code')).toHaveLength(1)
    await page.getByRole('button', { name: 'Sign out' }).click()
    await signInButton(page).waitFor()
    await signInButton(other).waitFor()
    // Its next action: the service refuses the ended session, and the tab says so.
    expect(await deaf.getByTestId('signed-in-as').isVisible()).toBe(true)
    await deaf
      .getByRole('navigation', { name: 'Console pages' })
      .getByRole('link', { name: 'Audit events' })
      .click()
    await signInButton(deaf).waitFor()
    await Promise.all([other.close(), deaf.close()])
    expect(await page.getByRole('heading', { name: 'Tenants' }).count()).toBe(0)
    const state = await kept()
    expect([state.local, state.session]).toStrictEqual([[], []])
    await page.reload()
    await page.getByRole('button', { name: 'Sign in with the identity provider' }).waitFor()
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0)
    const session = await page.evaluate(async () => (await fetch('/console/session')).status)
    expect(session).toBe(401)
  })

  it('RFC 6749 §10.12: an answer this tab did not ask for is refused, its code never exchanged', async () => {
    await page.goto(`${run.service.origin}/console/?code=forged-code&state=forged-state`)
    await page.getByText('does not belong to a sign-in of this tab').waitFor()
    expect(page.url()).toBe(run.url('/'))
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0)
    expect(userGrants().filter((grant) => grant === 'authorization_code')).toHaveLength(1)
  })

  it("checklist S-108: a tenant admin signs in through the provider and works on her tenant's pages, without a tenant picker", async () => {
    // The provider's session of the operator ends (as signing out at Keycloak would end it).
    await page.context().clearCookies()
    await page.goto(run.url('/key-chains'))
    await page.getByRole('button', { name: 'Sign in with the identity provider' }).click()
    await page.getByLabel('Username or email').fill(tenantAdmin.username)
    await page.getByLabel('Password').fill(tenantAdmin.password)
    await page.getByRole('button', { name: 'Sign In' }).click()

    await page.getByRole('heading', { name: `Key chains of ${tenant}` }).waitFor()
    expect(page.url()).toBe(run.url('/key-chains'))
    expect(await page.getByTestId('signed-in-as').textContent()).toBe(tenantAdmin.username)
    expect(await page.getByText(`Tenant ${tenant}`, { exact: true }).count()).toBe(1)
    expect(await page.getByRole('textbox', { name: 'Tenant' }).count()).toBe(0)
    expect(
      await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link').allTextContents(),
    ).toStrictEqual(['Key chains', 'API clients', 'Issuer branding', 'Audit events', 'Health and version'])
    await page.getByText('No key chain yet.').waitFor()
    await expectAccessible(page, "OIDC tenant admin's key chains page")

    // The API accepts her token for her tenant: a key chain is generated and listed.
    await page.getByRole('button', { name: 'Generate key chain' }).click()
    const dialog = page.getByRole('dialog', { name: 'Generate key chain' })
    await dialog.getByLabel('Id', { exact: true }).fill('signing')
    await dialog.getByLabel('Subject').fill('CN=Tenant Admin Issuer')
    await dialog.getByRole('button', { name: 'Generate key chain' }).click()
    await page.getByRole('heading', { name: 'Key chain signing', exact: true }).waitFor()
    await page
      .getByRole('navigation', { name: 'Console pages' })
      .getByRole('link', { name: 'Key chains' })
      .click()
    await page.getByRole('cell', { name: 'signing', exact: true }).waitFor()
    await expectAccessible(page, "OIDC tenant admin's key chain list")

    // Her session names her tenant and reaches no other tenant.
    expect(tokens).toStrictEqual([])
    const other = await page.evaluate(async () => {
      const view = (await (await fetch('/console/session')).json()) as { csrfToken: string; tenantId: string }
      const answer = await fetch('/api/tenants/t-other/key-chains', {
        headers: { 'x-console-csrf': view.csrfToken },
      })
      return { tenantId: view.tenantId, status: answer.status }
    })
    expect(other).toStrictEqual({ tenantId: tenant, status: 404 })
    expect(run.policyViolations).toStrictEqual([])
  })
})
