import { randomBytes } from 'node:crypto'
import { UnauthenticatedError } from '@credential-service/core-domain'
import type { JwkCipher } from '@credential-service/crypto'
import type { ConsoleOidcSessionRepository, ConsoleOidcSessionRow } from '@credential-service/db-schema'
import type { ProviderTokenVerifier } from '@credential-service/server-kit'
import { type ConsoleSessionView, consoleSessionId, csrfTokenOf } from './console-session-service'

/** The provider's answer to a token request: what the session keeps of it. */
export interface ProviderTokens {
  access_token: string
  expires_in: number
  refresh_token?: string
}

export interface ConsoleOidcSessionDeps {
  sessions: ConsoleOidcSessionRepository
  cipher: JwkCipher
  verify: ProviderTokenVerifier
  /** The authorization code grant at the provider, as the console's public client (PKCE). */
  exchangeCode: (input: {
    code: string
    codeVerifier: string
    redirectUri: string
  }) => Promise<ProviderTokens>
  /** The refresh token grant at the provider; throws when the provider refuses (its session ended). */
  refresh: (refreshToken: string) => Promise<ProviderTokens>
  /** CONSOLE_SESSION_MAX_SECONDS: the absolute timeout. */
  maxSeconds: number
  now?: () => number
}

type Tokens = {
  accessToken: string
  refreshToken: string | undefined
}

/** Renewed this long before the access token expires, so an API call never carries a dying one. */
const RENEW_BEFORE_MS = 60_000

/** Who signed in, for the console's header: the user's name, else the token's subject. */
function subjectOf(accessToken: string): string {
  try {
    const claims = JSON.parse(Buffer.from(accessToken.split('.')[1] ?? '', 'base64url').toString()) as Record<
      string,
      unknown
    >
    const name = claims.preferred_username ?? claims.sub
    return typeof name === 'string' ? name : 'signed in'
  } catch {
    return 'signed in'
  }
}

/**
 * Console sessions in OIDC mode (issue 42), the backend-for-frontend of the OAuth browser-apps
 * BCP: the management process exchanges the code, keeps the provider's access and refresh tokens
 * encrypted in the database (any process serves the session) and renews the access token at the
 * provider before it expires (silent renewal without a page round trip). The page holds only the
 * HttpOnly cookie and the CSRF token; no token ever reaches it.
 */
export function createConsoleOidcSessionService(deps: ConsoleOidcSessionDeps) {
  const now = deps.now ?? Date.now
  const context = (id: string) => `console-oidc-session:${id}`
  const seal = (id: string, tokens: Tokens) => deps.cipher.encrypt(tokens, context(id))
  const open = (row: ConsoleOidcSessionRow) =>
    deps.cipher.decrypt<Tokens>(row.tokensEncrypted, context(row.id))
  const expiry = (answer: ProviderTokens) => new Date(now() + answer.expires_in * 1000)

  /** The session's live access token, renewed at the provider first when it is about to expire. */
  async function current(
    secret: string,
  ): Promise<{ row: ConsoleOidcSessionRow; accessToken: string } | undefined> {
    const id = consoleSessionId(secret)
    let row = await deps.sessions.touch(id)
    if (!row) return undefined
    if (row.accessExpiresAt.getTime() - RENEW_BEFORE_MS <= now()) {
      row = await deps.sessions.renew(id, row.accessExpiresAt, async (locked) => {
        const { refreshToken } = open(locked)
        if (!refreshToken) return undefined
        const answer = await deps.refresh(refreshToken).catch(() => undefined)
        if (!answer) return undefined
        const tokens = {
          accessToken: answer.access_token,
          refreshToken: answer.refresh_token ?? refreshToken,
        }
        return { tokensEncrypted: seal(id, tokens), accessExpiresAt: expiry(answer) }
      })
      if (!row) return undefined
    }
    return { row, accessToken: open(row).accessToken }
  }

  async function viewOf(
    secret: string,
    row: ConsoleOidcSessionRow,
    accessToken: string,
  ): Promise<ConsoleSessionView> {
    const { principal } = await deps.verify(accessToken)
    return {
      clientId: row.subject,
      tenantId: principal.tenantId,
      roles: [...principal.roles],
      expiresAt: row.expiresAt.toISOString(),
      csrfToken: csrfTokenOf(secret),
    }
  }

  return {
    /** The provider's answer at the redirect URI: the code exchanged here, a new session. */
    async start(input: {
      code: string
      codeVerifier: string
      redirectUri: string
    }): Promise<{ secret: string; view: ConsoleSessionView }> {
      const answer = await deps.exchangeCode(input).catch((cause: unknown) => {
        throw new UnauthenticatedError('the identity provider refused the sign-in: sign in again', { cause })
      })
      // The API would refuse it anyway; a session is only made for a token it accepts.
      const { principal } = await deps.verify(answer.access_token)
      const secret = randomBytes(32).toString('base64url')
      const id = consoleSessionId(secret)
      const row = await deps.sessions.create({
        id,
        subject: subjectOf(answer.access_token),
        tenantId: principal.tenantId ?? null,
        tokensEncrypted: seal(id, { accessToken: answer.access_token, refreshToken: answer.refresh_token }),
        accessExpiresAt: expiry(answer),
        maxSeconds: deps.maxSeconds,
      })
      return { secret, view: await viewOf(secret, row, answer.access_token) }
    },

    /** The provider's access token of a live session, for the API's own guard. */
    async accessToken(secret: string): Promise<string | undefined> {
      return (await current(secret))?.accessToken
    },

    async view(secret: string): Promise<ConsoleSessionView | undefined> {
      const live = await current(secret)
      return live && viewOf(secret, live.row, live.accessToken)
    },

    async end(secret: string): Promise<void> {
      await deps.sessions.delete(consoleSessionId(secret))
    },
  }
}

export type ConsoleOidcSessionService = ReturnType<typeof createConsoleOidcSessionService>
