import { PassThrough } from 'node:stream'
import { NotFoundError, type Session, zSessionEventStream } from '@credential-service/core-domain'
import { problemResponses, requireTenantScope, tokenExpiry } from '@credential-service/server-kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { SessionEventHub } from '../services/session-events'
import { createSessionService, type SessionServiceDeps } from '../services/session-service'
import { sessionsMount } from './sessions'

export interface SessionEventsDeps extends SessionServiceDeps {
  hub: SessionEventHub
  heartbeatSeconds: number
}

const FINAL = new Set<Session['status']>(['completed', 'verified', 'failed', 'expired'])

/**
 * The event id: the session's last change and the status it has now (`expired` comes with time,
 * not with a change). A client that resumes with `Last-Event-ID` gets the session again only if
 * either differs.
 */
export const sessionEventId = (session: Session) => `${Date.parse(session.updatedAt)}.${session.status}`

/** The last event of a stream whose access token expired: the client resumes with a new token. */
export const TOKEN_EXPIRED_EVENT = 'token-expired'

const frame = (event: string, id: string | undefined, data: unknown) =>
  `${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`

const DESCRIPTION = [
  'Server-Sent Events (`text/event-stream`) of one session: an `event: session` with the whole session (as `GET …/sessions/{id}` answers it) when the stream opens and at every status change, made by any process, then the stream ends after a final status (`completed`, `verified`, `failed`, `expired`). `event: deleted` ends it when the session is deleted.',
  'Each `session` event has an `id`; a client that reconnects with `Last-Event-ID` gets the session at once only if it changed since (the browser’s `EventSource` does this by itself). Events carry the whole state, so a reconnect never misses the latest one, only intermediate ones. A comment line (`: keep-alive`) every `SESSION_EVENTS_HEARTBEAT_SECONDS` (15) keeps proxies from closing the connection.',
  'The stream lives no longer than the access token that opened it: at the token’s `exp` it ends with `event: token-expired` (`data: {"expiredAt":…}`, no `id`), and nothing after it. Resume with a new token and `Last-Event-ID` (the SDK does both by itself); the new request is authorised afresh.',
  'Problems (404, 403) are answered as JSON before the stream starts. Same roles as reading the session.',
].join('\n\n')

/** `GET /api/sessions/{id}/events` (and under the tenant): a session's status, live. */
export function sessionEventRoutes(
  deps: SessionEventsDeps,
  mount: { tenantInPath: boolean },
): FastifyPluginAsyncZod {
  const sessions = sessionsMount(mount.tenantInPath)
  const open = new Set<() => void>()

  return async (app) => {
    // A draining process ends its streams; clients reconnect to another one.
    app.addHook('preClose', async () => {
      for (const end of open) end()
    })

    app.get(
      `${sessions.item}/events`,
      {
        config: { roles: ['issuance:offer', 'presentation:request'] },
        schema: {
          operationId: sessions.op('streamSessionEvents'),
          tags: ['sessions'],
          summary: 'Follow a session live: its status changes as Server-Sent Events',
          description: DESCRIPTION,
          params: sessions.itemParams,
          headers: z.object({ 'last-event-id': z.string().max(100).optional() }),
          response: {
            200: {
              description: 'An event stream; each `data` line is a session',
              content: { 'text/event-stream': { schema: zSessionEventStream } },
            },
            ...problemResponses,
          },
        },
      },
      async (req, reply) => {
        const service = createSessionService(deps, requireTenantScope(req), req.principal)
        const id = req.params.id
        // Problems before the stream: a missing session or kind is JSON, not an event.
        await service.get(id)
        return stream(req, reply, {
          sessionId: id,
          read: () => service.get(id),
          watch: (changed) => deps.hub.watch(id, changed),
          heartbeatMs: deps.heartbeatSeconds * 1000,
          lastEventId: req.headers['last-event-id'],
          tokenExpiresAt: tokenExpiry(req),
          now: deps.now,
          open,
        })
      },
    )
  }
}

interface StreamOptions {
  sessionId: string
  read: () => Promise<Session>
  watch: (changed: () => void) => Promise<() => Promise<void>>
  heartbeatMs: number
  lastEventId: string | undefined
  /** The access token's expiry (ms): the stream ends there. */
  tokenExpiresAt: number | undefined
  now: () => Date
  open: Set<() => void>
}

async function stream(req: FastifyRequest, reply: FastifyReply, options: StreamOptions) {
  const body = new PassThrough()
  let lastId = options.lastEventId
  let ended = false
  let reading: Promise<void> | undefined
  let again = false
  let expiry: NodeJS.Timeout | undefined
  let tokenExpiry: NodeJS.Timeout | undefined

  const end = () => {
    if (ended) return
    ended = true
    clearInterval(heartbeat)
    clearTimeout(expiry)
    clearTimeout(tokenExpiry)
    options.open.delete(end)
    void stopWatching.then((stop) => stop()).catch(() => {})
    body.end()
  }
  // Reads the session and sends it when it changed; reads once more if asked meanwhile.
  const refresh = (): Promise<void> => {
    if (reading) {
      again = true
      return reading
    }
    reading = (async () => {
      do {
        again = false
        if (ended) return
        try {
          sendChanged(await options.read())
        } catch (error) {
          if (error instanceof NotFoundError) {
            body.write(frame('deleted', undefined, { id: options.sessionId }))
            return end()
          }
          req.log.warn({ err: error }, 'session stream: reading the session failed')
        }
      } while (again)
    })().finally(() => {
      reading = undefined
    })
    return reading
  }
  const sendChanged = (session: Session) => {
    const id = sessionEventId(session)
    if (id !== lastId && !ended) {
      lastId = id
      body.write(frame('session', id, session))
    }
    if (FINAL.has(session.status)) return end()
    // `expired` comes with time: read again just after the session's expiry.
    clearTimeout(expiry)
    const wait = Date.parse(session.expiresAt) - options.now().getTime() + 50
    expiry = setTimeout(() => void refresh(), Math.min(Math.max(wait, 0), 2 ** 31 - 1))
  }

  // Watching first, then reading: a change committed after the read is notified. One whose
  // trigger ran before the lease was visible shows at the next heartbeat's read.
  const stopWatching = options.watch(() => void refresh())
  const heartbeat = setInterval(() => {
    body.write(': keep-alive\n\n')
    void refresh()
  }, options.heartbeatMs)
  options.open.add(end)
  reply.raw.on('close', end)
  // Events (claims among them) go to the holder of a valid token only: at its expiry the stream
  // ends, and a resume is authorised again.
  const { tokenExpiresAt } = options
  if (tokenExpiresAt !== undefined) {
    const left = tokenExpiresAt - options.now().getTime()
    tokenExpiry = setTimeout(
      () => {
        if (ended) return
        body.write(
          frame(TOKEN_EXPIRED_EVENT, undefined, { expiredAt: new Date(tokenExpiresAt).toISOString() }),
        )
        end()
      },
      Math.min(Math.max(left, 0), 2 ** 31 - 1),
    )
  }
  try {
    await stopWatching
  } catch (error) {
    end()
    throw error
  }
  body.write(`retry: 2000\n\n`)
  void refresh()
  return (
    reply
      .type('text/event-stream; charset=utf-8')
      .header('cache-control', 'no-store')
      // nginx (docker/nginx.conf, the Kubernetes Ingress) would buffer the stream otherwise.
      .header('x-accel-buffering', 'no')
      .send(body)
  )
}
