import { onTenantChange } from '@credential-service/db-schema'

export interface TenantMemoOptions {
  /** Safety net behind change notifications (default 5 s; 0 = always read). */
  ttlMs?: number
  /** How many tenants a process keeps (oldest read dropped first). */
  maxTenants?: number
}

// A miss on a cached tenant re-reads at most this often: a row just created by another process is
// found before its notification arrives, and unknown ids cannot force a read per request.
const MISS_REREAD_MS = 100

/**
 * Per-tenant values read from the database once and shared by every request of the process.
 * Audited changes drop the tenant at once here and, through NOTIFY, in every other process (see
 * db-schema changes.ts); the TTL bounds staleness should a notification be lost in a reconnect.
 * Concurrent misses share one read; a failed read is not kept.
 */
export function createTenantMemo<T>(load: (tenantId: string) => Promise<T>, options: TenantMemoOptions = {}) {
  const ttlMs = options.ttlMs ?? 5000
  const maxTenants = options.maxTenants ?? 10_000
  const entries = new Map<string, { value: Promise<T>; loadedAt: number }>()
  onTenantChange((tenantId) => entries.delete(tenantId))

  function get(tenantId: string, reread = false): Promise<T> {
    const entry = entries.get(tenantId)
    const age = entry ? Date.now() - entry.loadedAt : Number.POSITIVE_INFINITY
    if (entry && age < ttlMs && !(reread && age >= MISS_REREAD_MS)) return entry.value
    const value = load(tenantId)
    value.catch(() => {
      if (entries.get(tenantId)?.value === value) entries.delete(tenantId)
    })
    entries.delete(tenantId)
    if (entries.size >= maxTenants) entries.delete(entries.keys().next().value as string)
    entries.set(tenantId, { value, loadedAt: Date.now() })
    return value
  }

  return {
    get: (tenantId: string) => get(tenantId),
    /** What `pick` finds; on a miss the tenant is read once more (it may have changed elsewhere). */
    async find<R>(tenantId: string, pick: (value: T) => R | undefined): Promise<R | undefined> {
      return pick(await get(tenantId)) ?? pick(await get(tenantId, true))
    },
  }
}
