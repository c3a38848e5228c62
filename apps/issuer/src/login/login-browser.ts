import { randomBytes } from 'node:crypto'

/**
 * The cookie that binds an upstream login to the browser that started it (RFC 6749 §10.12, BCP
 * §4.7): a login finished in another browser (a victim lured to the provider with an attacker's
 * state) is refused. One value per browser, reused by its parallel logins; only its hash is stored.
 */
const NAME = 'authz_login'
const VALUE = /^[A-Za-z0-9_-]{43}$/

/** The browser's login cookie from a `Cookie` header, if it sent a well-formed one. */
export function loginBrowserOf(cookieHeader: string | undefined): string | undefined {
  for (const pair of (cookieHeader ?? '').split(';')) {
    const at = pair.indexOf('=')
    if (at > 0 && pair.slice(0, at).trim() === NAME) {
      const value = pair.slice(at + 1).trim()
      if (VALUE.test(value)) return value
    }
  }
  return undefined
}

export const newLoginBrowser = () => randomBytes(32).toString('base64url')

/**
 * `Set-Cookie` for the login cookie: HttpOnly, Secure, SameSite=Lax (sent on the provider's
 * top-level redirect back to the callback), scoped to the tenant's issuer path.
 */
export function loginCookie(value: string, path: string, maxAgeSeconds: number): string {
  return `${NAME}=${value}; Path=${path}; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=Lax`
}
