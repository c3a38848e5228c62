import { ForbiddenError, UnauthenticatedError } from '@credential-service/core-domain'
import type { ClientCredentials } from '@credential-service/db-schema'
import { clientIp, failureLimit } from '@credential-service/server-kit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { ConsoleOidcSessionService } from '../services/console-oidc-session-service'
import {
  type ConsoleSessionService,
  type ConsoleSessionView,
  csrfMatches,
} from '../services/console-session-service'
import type { AuthFailures } from '../services/token-service'

/**
 * The cookie of a console session. `__Secure-`: browsers keep it only when it came over HTTPS
 * (or from localhost, which they count as secure). Set twice, once per path the console sends it
 * to: its pages and the API; the wallet-facing paths never see it.
 */
export const CONSOLE_COOKIE = '__Secure-console-session'
const COOKIE_PATHS = ['/console', '/api'] as const
/** The header that must repeat the session's CSRF token for the cookie to count. */
export const CSRF_HEADER = 'x-console-csrf'

export interface ConsoleSessionRoutesOptions {
  service: ConsoleSessionService
  authenticate: (clientId: string, clientSecret: string, failures: AuthFailures) => Promise<ClientCredentials>
  /** The service's own origin ({PUBLIC_URL}): a sign-in posted from elsewhere is refused. */
  origin: string
  maxSeconds: number
  /** Failed sign-ins per minute, counted with the token endpoint's (RATE_LIMIT_TOKEN_PER_MINUTE). */
  failuresPerMinute: number
}

function cookieOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie
  if (!header) return undefined
  for (const part of header.split(';')) {
    const [name, ...value] = part.trim().split('=')
    if (name === CONSOLE_COOKIE) return value.join('=') || undefined
  }
  return undefined
}

/**
 * Login CSRF: a browser names the page that posts. The console's own origin is PUBLIC_URL's, or
 * the host the request came to (the console opened at 127.0.0.1 while PUBLIC_URL says localhost).
 */
function sameOrigin(request: FastifyRequest, publicOrigin: string): boolean {
  const origin = request.headers.origin
  if (origin === undefined || origin === publicOrigin) return true
  try {
    return new URL(origin).host === request.headers.host
  } catch {
    return false
  }
}

const csrfOf = (request: FastifyRequest) => {
  const value = request.headers[CSRF_HEADER]
  return typeof value === 'string' ? value : undefined
}

function setCookies(reply: FastifyReply, value: string, maxAge: number) {
  reply.header(
    'set-cookie',
    COOKIE_PATHS.map(
      (path) =>
        `${CONSOLE_COOKIE}=${value}; Path=${path}; Max-Age=${maxAge}; HttpOnly; Secure; SameSite=Strict`,
    ),
  )
}

const zSignIn = z.object({ clientId: z.string().min(1), clientSecret: z.string().min(1) }).strict()

/** What the cookie routes need of a session service (client credentials or OIDC mode). */
interface SessionCookieService {
  accessToken(secret: string): Promise<string | undefined>
  view(secret: string): Promise<ConsoleSessionView | undefined>
  end(secret: string): Promise<void>
}

const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store')

/**
 * The routes every console session has, whatever signed it in: on `/api/**`, a request without
 * `Authorization` that carries the cookie and its CSRF token acts with the session's token; `GET
 * /console/session` tells the page who is signed in and its CSRF token; `DELETE` signs out.
 */
function registerSessionCookie(app: FastifyInstance, service: SessionCookieService) {
  // Before every route's own guard: the session stands in for the Bearer token. A cookie without
  // its CSRF header counts for nothing (a cross-site form or a Swagger page sends none).
  app.addHook('onRequest', async (request) => {
    if (request.headers.authorization || !request.url.startsWith('/api/')) return
    const secret = cookieOf(request)
    if (!secret || !csrfMatches(secret, csrfOf(request))) return
    const token = await service.accessToken(secret)
    if (token) request.headers.authorization = `Bearer ${token}`
  })

  app.get('/console/session', { schema: { hide: true } }, async (request, reply) => {
    const secret = cookieOf(request)
    const view = secret ? await service.view(secret) : undefined
    if (!view) throw new UnauthenticatedError('no console session: sign in')
    return noStore(reply).send(view)
  })

  app.delete('/console/session', { schema: { hide: true } }, async (request, reply) => {
    const secret = cookieOf(request)
    if (secret) {
      if (!csrfMatches(secret, csrfOf(request)))
        throw new ForbiddenError(`signing out needs the session's ${CSRF_HEADER} header`)
      await service.end(secret)
    }
    setCookies(reply, '', 0)
    return noStore(reply).code(204).send()
  })
}

/**
 * Issue 42: the console's server-side session. `POST /console/session` signs in (client id and
 * secret, checked and throttled as at the token endpoint) and sets the cookie; the rest is
 * `registerSessionCookie`'s.
 */
export async function registerConsoleSessions(app: FastifyInstance, options: ConsoleSessionRoutesOptions) {
  const { service } = options
  registerSessionCookie(app, service)

  const failures = failureLimit(app, [
    {
      name: 'token-failures-client',
      perMinute: options.failuresPerMinute,
      subject: (request) => {
        const clientId = (request.body as { clientId?: unknown } | undefined)?.clientId
        return typeof clientId === 'string' && clientId !== '' ? clientId : undefined
      },
    },
    { name: 'token-failures-ip', perMinute: options.failuresPerMinute, subject: clientIp },
  ])

  const typed = app.withTypeProvider<ZodTypeProvider>()
  typed.post('/console/session', { schema: { hide: true, body: zSignIn } }, async (request, reply) => {
    if (!sameOrigin(request, options.origin))
      throw new ForbiddenError('a console sign-in must come from the console')
    const { clientId, clientSecret } = request.body
    const found = await options.authenticate(clientId, clientSecret, {
      check: () => failures.check(request),
      record: () => failures.record(request),
    })
    const previous = cookieOf(request)
    if (previous) await service.end(previous)
    const { secret, view } = await service.start(found)
    setCookies(reply, secret, options.maxSeconds)
    return noStore(reply).code(201).send(view)
  })
}

const zOidcSignIn = z
  .object({
    code: z.string().min(1).max(4096),
    codeVerifier: z.string().min(43).max(128),
    redirectUri: z.url(),
  })
  .strict()

/**
 * Issue 42, OIDC mode: `POST /console/session/oidc` takes the provider's answer at the redirect
 * URI (the code and the PKCE verifier the page kept for the round trip), exchanges it here and
 * sets the cookie; the provider's tokens stay in this service (console-oidc-session-service.ts).
 */
export async function registerOidcConsoleSessions(
  app: FastifyInstance,
  options: { service: ConsoleOidcSessionService; origin: string; maxSeconds: number },
) {
  const { service } = options
  registerSessionCookie(app, service)
  const typed = app.withTypeProvider<ZodTypeProvider>()
  typed.post(
    '/console/session/oidc',
    { schema: { hide: true, body: zOidcSignIn } },
    async (request, reply) => {
      if (!sameOrigin(request, options.origin))
        throw new ForbiddenError('a console sign-in must come from the console')
      const previous = cookieOf(request)
      if (previous) await service.end(previous)
      const { secret, view } = await service.start(request.body)
      setCookies(reply, secret, options.maxSeconds)
      return noStore(reply).code(201).send(view)
    },
  )
}
