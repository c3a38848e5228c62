import { sql } from 'drizzle-orm'
import type { Executor } from './database'

/** NOTIFY channel on which every process hears that a tenant's configuration changed. */
export const TENANT_CHANGES_CHANNEL = 'credential_service_tenant_changes'

const listeners = new Set<(tenantId: string) => void>()

/**
 * Runs `listener` whenever a tenant's configuration, key chains, clients or settings change: at
 * once for changes made by this process, and (once `DatabaseHandle.listen` relays the channel)
 * for changes committed by any other process. Returns the unsubscribe function.
 */
export function onTenantChange(listener: (tenantId: string) => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

/** Tells this process's caches that a tenant changed. */
export function tenantChanged(tenantId: string): void {
  for (const listener of listeners) listener(tenantId)
}

/**
 * Announces a change inside the transaction making it: this process forgets the tenant now, and
 * PostgreSQL delivers the NOTIFY to every listening process when the transaction commits (a
 * rolled-back change announces nothing elsewhere).
 */
export async function announceTenantChange(tx: Executor, tenantId: string): Promise<void> {
  tenantChanged(tenantId)
  await tx.execute(sql`select pg_notify(${TENANT_CHANGES_CHANNEL}, ${tenantId})`)
}

/**
 * Status list entries are no tenant configuration: their changes go on the same channel as
 * `status-lists:<tenantId>` (a tenant id has no colon), heard by onStatusListChange only.
 */
const STATUS_LISTS_PREFIX = 'status-lists:'
const statusListListeners = new Set<(tenantId: string) => void>()

/** Runs `listener` whenever entries of a tenant's own status lists change. Returns the unsubscribe function. */
export function onStatusListChange(listener: (tenantId: string) => void): () => void {
  statusListListeners.add(listener)
  return () => statusListListeners.delete(listener)
}

/** Tells this process that a tenant's status lists changed. */
export function statusListChanged(tenantId: string): void {
  for (const listener of statusListListeners) listener(tenantId)
}

/**
 * Queues the NOTIFY of a status list change in the transaction making it (delivered on commit).
 * The caller tells this process with statusListChanged once committed: a cache dropped before the
 * commit could fetch the old list again.
 */
export async function announceStatusListChange(tx: Executor, tenantId: string): Promise<void> {
  await tx.execute(sql`select pg_notify(${TENANT_CHANGES_CHANNEL}, ${STATUS_LISTS_PREFIX + tenantId})`)
}

/** What a process does with a payload of the channel. */
export function relayChange(payload: string): void {
  if (payload.startsWith(STATUS_LISTS_PREFIX)) statusListChanged(payload.slice(STATUS_LISTS_PREFIX.length))
  else tenantChanged(payload)
}
