import { randomUUID } from 'node:crypto'
import {
  createSessionWatchRepository,
  type Database,
  SESSION_EVENTS_CHANNEL,
} from '@credential-service/db-schema'
import type { DatabaseHandle } from '@credential-service/db-schema/client'

export interface SessionEventHubDeps {
  db: Database
  /** LISTEN on the database (absent: streams notice changes by their periodic re-read only). */
  listen?: DatabaseHandle['listen'] | undefined
  /** How long a watch lease lasts; renewed every third of it while streams are open. */
  leaseSeconds?: number
  log: { warn(object: object, message: string): void }
}

export interface SessionEventHub {
  /**
   * Calls `changed` whenever another process (or this one) changes the session's status or deletes
   * it. Resolves once the lease is in place and the process listens; returns the stop function.
   */
  watch(sessionId: string, changed: () => void): Promise<() => Promise<void>>
  close(): Promise<void>
}

/**
 * One process's live session watches: one LISTEN connection for every stream, one lease row per
 * watched session (migration 0018's trigger NOTIFYs only watched sessions), leases renewed in one
 * statement per process.
 */
export function createSessionEventHub(deps: SessionEventHubDeps): SessionEventHub {
  const leaseSeconds = deps.leaseSeconds ?? 60
  const watches = createSessionWatchRepository(deps.db, randomUUID())
  const listeners = new Map<string, Set<() => void>>()
  let listening: Promise<() => Promise<void>> | undefined
  let renewal: NodeJS.Timeout | undefined

  const notify = (sessionId: string) => {
    for (const changed of listeners.get(sessionId) ?? []) changed()
  }
  const renewWhileWatching = () => {
    if (renewal || listeners.size === 0) return
    renewal = setInterval(
      () => {
        if (listeners.size === 0) {
          clearInterval(renewal)
          renewal = undefined
          return
        }
        watches
          .renew(leaseSeconds)
          .catch((error) => deps.log.warn({ err: error }, 'session watch renewal failed'))
      },
      (leaseSeconds * 1000) / 3,
    )
    renewal.unref()
  }

  return {
    async watch(sessionId, changed) {
      if (deps.listen && !listening) {
        listening = deps.listen(SESSION_EVENTS_CHANNEL, notify)
        listening.catch(() => {
          listening = undefined
        })
      }
      const first = !listeners.has(sessionId)
      const set = listeners.get(sessionId) ?? new Set<() => void>()
      listeners.set(sessionId, set)
      set.add(changed)
      try {
        await listening
        if (first) await watches.watch(sessionId, leaseSeconds)
      } catch (error) {
        set.delete(changed)
        if (set.size === 0) listeners.delete(sessionId)
        throw error
      }
      renewWhileWatching()
      return async () => {
        if (!set.delete(changed) || set.size > 0) return
        listeners.delete(sessionId)
        await watches.unwatch(sessionId).catch(() => {})
      }
    },
    async close() {
      clearInterval(renewal)
      renewal = undefined
      const watched = [...listeners.keys()]
      listeners.clear()
      await Promise.all(watched.map((sessionId) => watches.unwatch(sessionId).catch(() => {})))
      const unlisten = await listening?.catch(() => undefined)
      listening = undefined
      // The database may be closed already (its pool ends its LISTEN connection too).
      await unlisten?.().catch(() => {})
    },
  }
}
