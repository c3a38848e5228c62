import { startOidcSession } from './server-session'
import type { Session } from './session'

/** How the console signs in at the identity provider (apps/management `/console/config.json`). */
export interface OidcSignInConfig {
  mode: 'oidc'
  issuer: string
  /** The console's public client at the provider (CONSOLE_OIDC_CLIENT_ID). */
  clientId: string
  authorizationEndpoint: string
  tokenEndpoint: string
  tenantClaim: string
  rolesClaim: string
}

export type ConsoleConfig = { mode: 'client-credentials' } | OidcSignInConfig

let config: Promise<ConsoleConfig> | undefined

/** The served sign-in configuration, asked once per page load (a failure is asked again). */
export function consoleConfig(): Promise<ConsoleConfig> {
  config ??= fetch('/console/config.json', { headers: { accept: 'application/json' } }).then(
    async (response) => {
      if (!response.ok) throw new Error(`The console's configuration answered ${response.status}.`)
      return (await response.json()) as ConsoleConfig
    },
  )
  config.catch(() => {
    config = undefined
  })
  return config
}

/**
 * What lives in sessionStorage between leaving for the provider and coming back: the request's
 * `state` and PKCE `code_verifier` (RFC 7636), and the console page to return to. Deleted as the
 * answer arrives, used or not; never a token.
 */
interface PendingSignIn {
  state: string
  codeVerifier: string
  returnTo: string
}

const PENDING = 'console.oidc.pending'

/** The redirect URI registered for the console's client: one, whatever page sign-in began on. */
export const redirectUri = () => `${window.location.origin}/console/`

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')

const randomText = () => base64url(crypto.getRandomValues(new Uint8Array(32)))

/** Sends the browser to the provider's login: authorization code, PKCE S256 (RFC 7636 §4.2). */
export async function startOidcSignIn(signIn: OidcSignInConfig, returnTo: string): Promise<void> {
  const pending: PendingSignIn = { state: randomText(), codeVerifier: randomText(), returnTo }
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pending.codeVerifier))),
  )
  sessionStorage.setItem(PENDING, JSON.stringify(pending))
  const url = new URL(signIn.authorizationEndpoint)
  url.searchParams.set('response_type', 'code')
  url.searchParams.set('client_id', signIn.clientId)
  url.searchParams.set('redirect_uri', redirectUri())
  url.searchParams.set('scope', 'openid')
  url.searchParams.set('state', pending.state)
  url.searchParams.set('code_challenge', challenge)
  url.searchParams.set('code_challenge_method', 'S256')
  window.location.assign(url.toString())
}

/** The provider's answer at the redirect URI, taken out of the address bar (see below). */
interface RedirectAnswer {
  params: URLSearchParams
  pending: PendingSignIn | undefined
}

/**
 * Read as this module loads, before the router reads the address: the code and state leave the
 * URL (and the history entry) at once, and the pending request leaves sessionStorage, whatever
 * comes of the exchange.
 */
const answer: RedirectAnswer | undefined = (() => {
  const params = new URLSearchParams(window.location.search)
  if (window.location.pathname !== '/console/' || !params.has('state')) return undefined
  if (!params.has('code') && !params.has('error')) return undefined
  const stored = sessionStorage.getItem(PENDING)
  sessionStorage.removeItem(PENDING)
  let pending: PendingSignIn | undefined
  try {
    pending = stored ? (JSON.parse(stored) as PendingSignIn) : undefined
  } catch {
    pending = undefined
  }
  // Only a console path is a place to return to.
  const returnTo = pending?.returnTo.startsWith('/console/') ? pending.returnTo : '/console/'
  window.history.replaceState(null, '', returnTo)
  return { params, pending }
})()

let exchange: Promise<Session | undefined> | undefined

/**
 * The console session of the provider's answer, if the page was loaded with one: the state checked
 * against the pending request (CSRF, RFC 6749 §10.12), the issuer when the provider names it (RFC
 * 9207), then the code and the PKCE verifier handed to the service, which exchanges them and keeps
 * the tokens (issue 42: the page never holds one). Once per page load; undefined without an answer.
 */
export function completeOidcSignIn(signIn: OidcSignInConfig): Promise<Session | undefined> {
  exchange ??= (async () => {
    if (!answer) return undefined
    const { params, pending } = answer
    if (!pending || params.get('state') !== pending.state)
      throw new Error('The sign-in answer does not belong to a sign-in of this tab. Sign in again.')
    const error = params.get('error')
    if (error) throw new Error(`The identity provider refused: ${params.get('error_description') ?? error}`)
    const iss = params.get('iss')
    if (iss !== null && iss !== signIn.issuer)
      throw new Error('The sign-in answer names another identity provider. Sign in again.')
    return startOidcSession({
      code: params.get('code') ?? '',
      redirectUri: redirectUri(),
      codeVerifier: pending.codeVerifier,
    })
  })()
  return exchange
}
