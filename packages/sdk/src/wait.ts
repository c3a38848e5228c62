import type { Session } from './generated/types.js'

export type SessionStatus = Session['status']

/** Statuses after which a session never changes. */
export const FINAL_SESSION_STATUSES: readonly SessionStatus[] = ['completed', 'verified', 'failed', 'expired']

export interface WaitForSessionOptions {
  /** Statuses to wait for, or a test of the session; a final status (completed, verified, failed, expired) when absent. */
  until?: SessionStatus | readonly SessionStatus[] | ((session: Session) => boolean)
  /** Gives up after this long (default 60 000 ms). */
  timeoutMs?: number
  /** Time between polls (default 1 000 ms). */
  intervalMs?: number
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

export async function waitForSession(
  read: (signal: AbortSignal | undefined) => Promise<Session>,
  options: WaitForSessionOptions,
): Promise<Session> {
  const { until = FINAL_SESSION_STATUSES, timeoutMs = 60_000, intervalMs = 1_000, signal } = options
  const matches =
    typeof until === 'function'
      ? until
      : (session: Session) => (typeof until === 'string' ? [until] : until).includes(session.status)
  const deadline = Date.now() + timeoutMs
  let session: Session | undefined
  for (;;) {
    session = await read(signal)
    if (matches(session)) return session
    if (FINAL_SESSION_STATUSES.includes(session.status))
      throw new SessionWaitError('ended', session, `session ${session.id} ended as ${session.status}`)
    const left = deadline - Date.now()
    if (left <= 0)
      throw new SessionWaitError('timeout', session, `session ${session.id} is still ${session.status}`)
    await delay(Math.min(intervalMs, left), signal)
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
