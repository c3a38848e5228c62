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
