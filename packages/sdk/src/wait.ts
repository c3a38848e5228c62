import type { ServerSentEvent } from './events.js'
import type { Session } from './generated/types.js'

export type SessionStatus = Session['status']

/** Statuses after which a session never changes. */
export const FINAL_SESSION_STATUSES: readonly SessionStatus[] = ['completed', 'verified', 'failed', 'expired']

export interface WaitForSessionOptions {
  /** Statuses to wait for, or a test of the session; a final status (completed, verified, failed, expired) when absent. */
  until?: SessionStatus | readonly SessionStatus[] | ((session: Session) => boolean)
  /** Gives up after this long (default 60 000 ms). */
  timeoutMs?: number
  /** Time between polls (default 1 000 ms), when the session's event stream is not available. */
  intervalMs?: number
  /**
   * Follow the session's event stream (`GET /api/sessions/{id}/events`, default true): status
   * changes arrive as they happen. Polling takes over when the stream cannot be opened (an older
   * server, a proxy that refuses streams) or breaks.
   */
  stream?: boolean
  /** Operator clients: the tenant the session belongs to. */
  tenantId?: string
  signal?: AbortSignal
}

/** Why waiting stopped without the awaited status; `session` is the last one read. */
export class SessionWaitError extends Error {
  readonly reason: 'timeout' | 'ended'
  readonly session: Session | undefined
  constructor(reason: 'timeout' | 'ended', session: Session | undefined, message: string) {
    super(message)
    this.name = 'SessionWaitError'
    this.reason = reason
    this.session = session
  }
}

/**
 * Waits for the session to match `until`: from its event stream (`follow`) while it flows, then
 * by reading it every `intervalMs`.
 */
export async function waitForSession(
  read: (signal: AbortSignal | undefined) => Promise<Session>,
  options: WaitForSessionOptions,
  follow?: (signal: AbortSignal) => AsyncIterable<ServerSentEvent>,
): Promise<Session> {
  const { until = FINAL_SESSION_STATUSES, timeoutMs = 60_000, intervalMs = 1_000, signal } = options
  const matches =
    typeof until === 'function'
      ? until
      : (session: Session) => (typeof until === 'string' ? [until] : until).includes(session.status)
  const deadline = Date.now() + timeoutMs
  let session: Session | undefined
  /** The session if it is the awaited one; throws when it ended otherwise. */
  const judge = (current: Session): Session | undefined => {
    session = current
    if (matches(current)) return current
    if (FINAL_SESSION_STATUSES.includes(current.status))
      throw new SessionWaitError('ended', current, `session ${current.id} ended as ${current.status}`)
    return undefined
  }
  const timedOut = () =>
    new SessionWaitError(
      'timeout',
      session,
      session ? `session ${session.id} is still ${session.status}` : `no session read within ${timeoutMs} ms`,
    )

  if (follow && options.stream !== false) {
    const found = await followStream(follow, judge, deadline, signal)
    if (found) return found
  }
  for (;;) {
    const found = judge(await read(signal))
    if (found) return found
    const left = deadline - Date.now()
    if (left <= 0) throw timedOut()
    await delay(Math.min(intervalMs, left), signal)
  }

  /** The awaited session from the stream; undefined when the stream ended or failed first. */
  async function followStream(
    events: (signal: AbortSignal) => AsyncIterable<ServerSentEvent>,
    check: (current: Session) => Session | undefined,
    until: number,
    outer: AbortSignal | undefined,
  ): Promise<Session | undefined> {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), Math.max(until - Date.now(), 0))
    const abort = () => controller.abort(outer?.reason)
    outer?.addEventListener('abort', abort, { once: true })
    try {
      for await (const event of events(controller.signal)) {
        if (event.event !== 'session') break
        const found = check(JSON.parse(event.data) as Session)
        if (found) return found
      }
      return undefined
    } catch (error) {
      if (error instanceof SessionWaitError) throw error
      if (outer?.aborted) throw outer.reason
      if (controller.signal.aborted) throw timedOut()
      return undefined
    } finally {
      clearTimeout(timer)
      outer?.removeEventListener('abort', abort)
      controller.abort()
    }
  }
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
