import { queryRows, testDatabases } from '@credential-service/db-schema/testing'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONSOLE_COOKIE, CSRF_HEADER } from '../src/routes/console-session'
import { createHarness, type Harness, type TestClient } from './harness'

/**
 * Issue 42 item 2: the admin console's server-side session (backend-for-frontend, OAuth 2.0 for
 * Browser-Based Applications §6.1): an HttpOnly cookie, idle and absolute timeouts, sign-out, CSRF
 * defence. The browser behaviour is tested in apps/console/test/session.test.ts.
 */
describe.each(testDatabases())('console sessions (/console/session) on $name', (testDatabase) => {
  let h: Harness
  let admin: TestClient
  beforeAll(async () => {
    h = await createHarness(testDatabase)
    admin = await h.createClient(h.tenantA, ['tenant:admin', 'key:manage'])
  })
  afterAll(() => h.close())

  interface Signed {
    cookie: string
    csrf: string
    setCookies: string[]
    body: Record<string, unknown>
  }

  async function signIn(client: { clientId: string; clientSecret: string }): Promise<Signed> {
    const response = await h.app.inject({
      method: 'POST',
      url: '/console/session',
      payload: { clientId: client.clientId, clientSecret: client.clientSecret },
    })
    expect(response.statusCode, response.body).toBe(201)
    const setCookies = [response.headers['set-cookie'] ?? []].flat()
    const value = /=([^;]*)/.exec(setCookies[0] ?? '')?.[1] ?? ''
    const body = response.json()
    return { cookie: `${CONSOLE_COOKIE}=${value}`, csrf: body.csrfToken, setCookies, body }
  }

  /** An API call as the console makes it; `csrf` null sends no CSRF header. */
  const api = (session: Signed, url: string, csrf: string | null = session.csrf, method = 'GET') =>
    h.app.inject({
      method: method as 'GET',
      url,
      headers: { cookie: session.cookie, ...(csrf === null ? {} : { [CSRF_HEADER]: csrf }) },
    })

  describe('happy', () => {
    it('sign-in sets an HttpOnly, Secure, SameSite=Strict cookie on /console and /api, and answers no token', async () => {
      const signed = await signIn(admin)
      expect(signed.setCookies).toHaveLength(2)
      for (const [n, path] of ['/console', '/api'].entries())
        expect(signed.setCookies[n]).toMatch(
          new RegExp(
            `^${CONSOLE_COOKIE}=[A-Za-z0-9_-]{43}; Path=${path}; Max-Age=43200; HttpOnly; Secure; SameSite=Strict$`,
          ),
        )
      expect(signed.body).toStrictEqual({
        clientId: admin.clientId,
        tenantId: h.tenantA,
        roles: ['tenant:admin', 'key:manage'],
        expiresAt: expect.any(String),
        csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      })
      const lifetime = Date.parse(signed.body.expiresAt as string) - Date.now()
      expect(lifetime).toBeGreaterThan(43_100_000)
      expect(lifetime).toBeLessThanOrEqual(43_200_000)
    })

    it('the cookie with its CSRF token acts with the client’s roles on /api; GET /console/session says who', async () => {
      const signed = await signIn(admin)
      const response = await api(signed, '/api/key-chains')
      expect(response.statusCode, response.body).toBe(200)
      const who = await h.app.inject({ url: '/console/session', headers: { cookie: signed.cookie } })
      expect(who.statusCode).toBe(200)
      expect(who.headers['cache-control']).toBe('no-store')
      expect(who.json()).toStrictEqual(signed.body)
    })

    it('sign-out ends the session in the database and clears both cookies', async () => {
      const signed = await signIn(admin)
      const out = await api(signed, '/console/session', signed.csrf, 'DELETE')
      expect(out.statusCode).toBe(204)
      expect([out.headers['set-cookie']].flat()).toStrictEqual([
        `${CONSOLE_COOKIE}=; Path=/console; Max-Age=0; HttpOnly; Secure; SameSite=Strict`,
        `${CONSOLE_COOKIE}=; Path=/api; Max-Age=0; HttpOnly; Secure; SameSite=Strict`,
      ])
      expect((await api(signed, '/api/key-chains')).statusCode).toBe(401)
      expect(
        (await h.app.inject({ url: '/console/session', headers: { cookie: signed.cookie } })).statusCode,
      ).toBe(401)
    })
  })

  describe('error', () => {
    it('a wrong secret is 401 and sets no cookie', async () => {
      const response = await h.app.inject({
        method: 'POST',
        url: '/console/session',
        payload: { clientId: admin.clientId, clientSecret: 'not-the-secret-0123' },
      })
      expect(response.statusCode).toBe(401)
      expect(response.headers['set-cookie']).toBeUndefined()
    })

    it('a body with more than id and secret is 400', async () => {
      const response = await h.app.inject({
        method: 'POST',
        url: '/console/session',
        payload: { clientId: admin.clientId, clientSecret: admin.clientSecret, scope: 'tenant:manage' },
      })
      expect(response.statusCode).toBe(400)
    })

    it('without a session, GET /console/session is 401', async () => {
      expect((await h.app.inject({ url: '/console/session' })).statusCode).toBe(401)
      const forged = await h.app.inject({
        url: '/console/session',
        headers: { cookie: `${CONSOLE_COOKIE}=forged` },
      })
      expect(forged.statusCode).toBe(401)
    })
  })

  describe('security', () => {
    it('CSRF: the cookie without the session’s CSRF header, or with another session’s, authorises nothing', async () => {
      const signed = await signIn(admin)
      const other = await signIn(admin)
      expect((await api(signed, '/api/key-chains', null)).statusCode).toBe(401)
      expect((await api(signed, '/api/key-chains', other.csrf)).statusCode).toBe(401)
      expect((await api(signed, '/api/key-chains', '')).statusCode).toBe(401)
      // Sign-out too needs it; the session lives on.
      expect((await api(signed, '/console/session', other.csrf, 'DELETE')).statusCode).toBe(403)
      expect((await api(signed, '/api/key-chains')).statusCode).toBe(200)
    })

    it('login CSRF: a sign-in posted from another origin is refused', async () => {
      const response = await h.app.inject({
        method: 'POST',
        url: '/console/session',
        headers: { origin: 'https://attacker.example' },
        payload: { clientId: admin.clientId, clientSecret: admin.clientSecret },
      })
      expect(response.statusCode).toBe(403)
      expect(response.headers['set-cookie']).toBeUndefined()
    })

    it('the cookie is not a token elsewhere: another tenant’s path reads as not found', async () => {
      const signed = await signIn(admin)
      expect((await api(signed, `/api/tenants/${h.tenantB}/key-chains`)).statusCode).toBe(404)
    })

    it('an explicit Authorization header wins over the cookie', async () => {
      const signed = await signIn(admin)
      const response = await h.app.inject({
        url: '/api/key-chains',
        headers: { cookie: signed.cookie, [CSRF_HEADER]: signed.csrf, authorization: 'Bearer made-up' },
      })
      expect(response.statusCode).toBe(401)
    })

    it('idle timeout: a session unused for CONSOLE_SESSION_IDLE_SECONDS has ended', async () => {
      const signed = await signIn(admin)
      const id = (signed.cookie.split('=')[1] ?? '').length
      expect(id).toBe(43)
      await h.database.db.execute(
        sql`update console_sessions set last_seen_at = now() - interval '1801 seconds' where client_id = ${admin.clientId}`,
      )
      expect((await api(signed, '/api/key-chains')).statusCode).toBe(401)
      // Used within the idle time, it goes on.
      const fresh = await signIn(admin)
      await h.database.db.execute(
        sql`update console_sessions set last_seen_at = now() - interval '1700 seconds' where client_id = ${admin.clientId}`,
      )
      expect((await api(fresh, '/api/key-chains')).statusCode).toBe(200)
      expect((await api(fresh, '/api/key-chains')).statusCode).toBe(200)
    })

    it('absolute timeout: past expires_at the session has ended, however recently used', async () => {
      const signed = await signIn(admin)
      await h.database.db.execute(
        sql`update console_sessions set expires_at = now() - interval '1 second' where client_id = ${admin.clientId}`,
      )
      expect((await api(signed, '/api/key-chains')).statusCode).toBe(401)
    })

    it('a client’s secret rotated after sign-in ends its sessions at once, in every process', async () => {
      const client = await h.createClient(h.tenantA, ['key:read'])
      const signed = await signIn(client)
      expect((await api(signed, '/api/key-chains')).statusCode).toBe(200)
      const rotated = await h.app.inject({
        method: 'POST',
        url: `/api/tenants/${h.tenantA}/clients/${client.clientId}/rotate-secret`,
        headers: h.root.auth,
        payload: {},
      })
      expect(rotated.statusCode, rotated.body).toBe(200)
      expect((await api(signed, '/api/key-chains')).statusCode).toBe(401)
      // The new secret signs in again.
      const again = await signIn({ clientId: client.clientId, clientSecret: rotated.json().clientSecret })
      expect((await api(again, '/api/key-chains')).statusCode).toBe(200)
    })

    it('a deleted client takes its sessions with it', async () => {
      const client = await h.createClient(h.tenantA, ['key:read'])
      const signed = await signIn(client)
      const deleted = await h.app.inject({
        method: 'DELETE',
        url: `/api/tenants/${h.tenantA}/clients/${client.clientId}`,
        headers: h.root.auth,
      })
      expect(deleted.statusCode).toBe(204)
      expect((await api(signed, '/api/key-chains')).statusCode).toBe(401)
      const rows = await queryRows<{ n: number }>(
        h.database.db,
        sql`select count(*)::int as n from console_sessions where client_id = ${client.clientId}`,
      )
      expect(rows).toStrictEqual([{ n: 0 }])
    })
  })
})
