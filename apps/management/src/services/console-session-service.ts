import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Principal, Role } from '@credential-service/core-domain'
import type { ClientCredentials, ConsoleSessionRepository } from '@credential-service/db-schema'
import type { IssuedToken } from '@credential-service/server-kit'

export interface ConsoleSessionServiceDeps {
  sessions: ConsoleSessionRepository
  findClient: (clientId: string) => Promise<ClientCredentials | undefined>
  issueToken: (principal: Principal) => Promise<IssuedToken>
  /** CONSOLE_SESSION_MAX_SECONDS: the absolute timeout. */
  maxSeconds: number
  now?: () => number
}

/** What the console may know of its session: never a token. */
export interface ConsoleSessionView {
  clientId: string
  tenantId: string | undefined
  roles: Role[]
  /** When the session ends at the latest (ISO 8601); sooner when it stays unused. */
  expiresAt: string
  /** Sent back as `x-console-csrf` on every API call (the cookie alone authorises nothing). */
  csrfToken: string
}

interface Minted {
  accessToken: string
  principal: Principal
  /** Epoch ms after which a new token is minted. */
  renewAt: number
}

const REMEMBERED = 1000
const RENEW_BEFORE_MS = 60_000

/** The row's key: a database read gives no cookie. */
export const consoleSessionId = (secret: string) => createHash('sha256').update(secret).digest('base64url')

/** The CSRF token of a session, derived from its cookie: nothing more to store or to look up. */
export const csrfTokenOf = (secret: string) =>
  createHmac('sha256', secret).update('console-csrf').digest('base64url')

export function csrfMatches(secret: string, presented: string | undefined): boolean {
  if (!presented) return false
  const expected = Buffer.from(csrfTokenOf(secret))
  const given = Buffer.from(presented)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/**
 * Server-side console sessions (issue 42, the OAuth browser-apps BCP's backend-for-frontend): the
 * browser holds an HttpOnly cookie; each management process mints the session's management token
 * itself from the client's current record (its roles as they are now) and keeps it in memory, so
 * no token is ever stored or sent to the page. A client deleted, or its secret rotated after
 * sign-in, ends its sessions at their next request.
 */
export function createConsoleSessionService(deps: ConsoleSessionServiceDeps) {
  const now = deps.now ?? Date.now
  const minted = new Map<string, Minted>()

  async function mint(id: string, clientId: string): Promise<Minted | undefined> {
    const found = await deps.findClient(clientId)
    if (!found) {
      await deps.sessions.delete(id)
      return undefined
    }
    const principal: Principal = {
      clientId,
      tenantId: found.client.tenantId ?? undefined,
      ...(found.tenantGeneration == null ? {} : { tenantGeneration: found.tenantGeneration }),
      roles: found.client.roles,
    }
    const token = await deps.issueToken(principal)
    const fresh = {
      accessToken: token.accessToken,
      principal,
      renewAt: now() + token.expiresIn * 1000 - RENEW_BEFORE_MS,
    }
    if (minted.size >= REMEMBERED) minted.delete(minted.keys().next().value as string)
    minted.set(id, fresh)
    return fresh
  }

  /** The session's token and principal while it lives (its idle clock restarted), else undefined. */
  async function resolve(secret: string): Promise<(Minted & { expiresAt: Date }) | undefined> {
    const id = consoleSessionId(secret)
    const live = await deps.sessions.touch(id)
    if (!live) {
      minted.delete(id)
      return undefined
    }
    const known = minted.get(id)
    const current = known && now() < known.renewAt ? known : await mint(id, live.clientId)
    return current && { ...current, expiresAt: live.expiresAt }
  }

  const viewOf = (
    secret: string,
    session: { principal: Principal; expiresAt: Date },
  ): ConsoleSessionView => ({
    clientId: session.principal.clientId,
    tenantId: session.principal.tenantId,
    roles: [...session.principal.roles],
    expiresAt: session.expiresAt.toISOString(),
    csrfToken: csrfTokenOf(secret),
  })

  return {
    /** After the client authenticated: a new session (a new cookie secret every sign-in). */
    async start(found: ClientCredentials): Promise<{ secret: string; view: ConsoleSessionView }> {
      const secret = randomBytes(32).toString('base64url')
      const row = await deps.sessions.create({
        id: consoleSessionId(secret),
        clientId: found.client.clientId,
        tenantId: found.client.tenantId,
        maxSeconds: deps.maxSeconds,
      })
      const session = await resolve(secret)
      if (!session) throw new Error('the console session ended as it began')
      return { secret, view: viewOf(secret, { ...session, expiresAt: row.expiresAt }) }
    },

    /** The bearer token of a live session, for the API's own guard. */
    async accessToken(secret: string): Promise<string | undefined> {
      return (await resolve(secret))?.accessToken
    },

    async view(secret: string): Promise<ConsoleSessionView | undefined> {
      const session = await resolve(secret)
      return session && viewOf(secret, session)
    },

    async end(secret: string): Promise<void> {
      const id = consoleSessionId(secret)
      minted.delete(id)
      await deps.sessions.delete(id)
    },
  }
}

export type ConsoleSessionService = ReturnType<typeof createConsoleSessionService>
