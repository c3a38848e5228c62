import type { Role } from '@credential-service/core-domain'
import type { Session } from './session'

/**
 * The server-side console session (issue 42, client credentials and OIDC mode): the management
 * process keeps the session and its token (in OIDC mode the provider's, renewed there); this tab holds an HttpOnly cookie it cannot read, and the
 * session's CSRF token, which alone authorises nothing. Reload, a new tab or a deep link find the
 * session again with `GET /console/session`.
 */
interface SessionAnswer {
  clientId: string
  tenantId?: string
  roles: Role[]
  expiresAt: string
  csrfToken: string
}

/** The header that repeats the CSRF token on every API call (apps/management console-session.ts). */
export const CSRF_HEADER = 'x-console-csrf'

const URL_PATH = '/console/session'

/** A refusal with its status, as the sign-in page reads it (401: wrong id or secret). */
export class SessionRequestError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message)
  }
}

async function answerOf(response: Response): Promise<Session> {
  if (!response.ok) {
    const problem = (await response.json().catch(() => ({}))) as { detail?: string }
    throw new SessionRequestError(
      problem.detail ?? `The console session answered ${response.status}.`,
      response.status,
    )
  }
  const body = (await response.json()) as SessionAnswer
  return {
    clientId: body.clientId,
    roles: body.roles,
    tenantId: body.tenantId,
    expiresAt: Date.parse(body.expiresAt),
    csrfToken: body.csrfToken,
  }
}

/** The live session of this browser, if there is one. */
export async function resumeSession(): Promise<Session | undefined> {
  const response = await fetch(URL_PATH, { headers: { accept: 'application/json' } })
  if (response.status === 401) return undefined
  return answerOf(response)
}

export async function startSession(clientId: string, clientSecret: string): Promise<Session> {
  const response = await fetch(URL_PATH, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify({ clientId, clientSecret }),
  })
  return answerOf(response)
}

/** OIDC mode: the provider's answer, for the service to exchange (it keeps the tokens). */
export async function startOidcSession(answer: {
  code: string
  codeVerifier: string
  redirectUri: string
}): Promise<Session> {
  const response = await fetch(`${URL_PATH}/oidc`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify(answer),
  })
  return answerOf(response)
}

/** Ends the session at the service (and clears its cookie); ended already is fine. */
export async function endSession(csrfToken: string): Promise<void> {
  await fetch(URL_PATH, { method: 'DELETE', headers: { [CSRF_HEADER]: csrfToken } }).catch(() => undefined)
}

/** The API's fetch for a server session: same-origin cookie, plus the CSRF header. */
export function sessionFetch(csrfToken: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers)
    headers.set(CSRF_HEADER, csrfToken)
    return fetch(input, { ...init, headers, credentials: 'same-origin' })
  }
}

/**
 * Tabs of this browser tell each other when they sign in or out, so another tab follows at once
 * rather than at its next API call.
 */
export type TabMessage = 'signed-in' | 'signed-out'
export const tabChannel = () =>
  typeof BroadcastChannel === 'undefined' ? undefined : new BroadcastChannel('console-session')
