import type { Client, CredentialConfig, PresentationConfig, Tenant } from '@credential-service/core-domain'
import {
  createClientRepository,
  createCredentialConfigRepository,
  createPresentationConfigRepository,
  createTenantRepository,
  type Database,
  onTenantChange,
} from '@credential-service/db-schema'

export interface TenantSnapshot {
  tenant: Tenant | undefined
  credentialConfigs: CredentialConfig[]
  presentationConfigs: PresentationConfig[]
  /** The tenant's clients without secrets (allowed configuration lists). */
  clients: Client[]
}

export interface TenantCacheOptions {
  db: Database
  /** Safety net behind change notifications (default 5 s; 0 = always read). */
  ttlMs?: number
  /** How many tenants a process keeps (oldest dropped first). */
  maxTenants?: number
}

// A miss on a known tenant re-reads at most this often: a configuration just created by another
// process is found before its notification arrives, and unknown ids cannot force a read per request.
const MISS_REREAD_MS = 100

/**
 * A tenant's settings and configurations, read once and shared by every request of the process:
 * each issuance and presentation step needs them, and they change rarely. Audited changes drop the
 * tenant at once in this process and, through NOTIFY, in every other process (see db-schema
 * changes.ts); the TTL bounds staleness should a notification be lost in a reconnect.
 */
export function createTenantCache(options: TenantCacheOptions) {
  const ttlMs = options.ttlMs ?? 5000
  const maxTenants = options.maxTenants ?? 10_000
  const entries = new Map<string, { snapshot: Promise<TenantSnapshot>; loadedAt: number }>()
  onTenantChange((tenantId) => entries.delete(tenantId))

  async function load(tenantId: string): Promise<TenantSnapshot> {
    const [tenant, credentialConfigs, presentationConfigs, clients] = await Promise.all([
      createTenantRepository(options.db).get(tenantId),
      createCredentialConfigRepository(options.db, tenantId).all(),
      createPresentationConfigRepository(options.db, tenantId).all(),
      createClientRepository(options.db, tenantId).all(),
    ])
    return { tenant, credentialConfigs, presentationConfigs, clients }
  }

  function snapshot(tenantId: string, reread = false): Promise<TenantSnapshot> {
    const entry = entries.get(tenantId)
    const age = entry ? Date.now() - entry.loadedAt : Number.POSITIVE_INFINITY
    if (entry && age < ttlMs && !(reread && age >= MISS_REREAD_MS)) return entry.snapshot
    // One read per tenant however many requests miss at once; a failed read is not kept.
    const loading = load(tenantId)
    loading.catch(() => {
      if (entries.get(tenantId)?.snapshot === loading) entries.delete(tenantId)
    })
    entries.delete(tenantId)
    if (entries.size >= maxTenants) entries.delete(entries.keys().next().value as string)
    entries.set(tenantId, { snapshot: loading, loadedAt: Date.now() })
    return loading
  }

  /** Finds by `pick`; on a miss, re-reads the tenant once (it may have changed elsewhere just now). */
  async function find<T>(tenantId: string, pick: (snapshot: TenantSnapshot) => T | undefined) {
    return pick(await snapshot(tenantId)) ?? pick(await snapshot(tenantId, true))
  }

  return {
    tenant: (tenantId: string) => find(tenantId, (s) => s.tenant),
    credentialConfigs: async (tenantId: string) => (await snapshot(tenantId)).credentialConfigs,
    credentialConfig: (tenantId: string, id: string) =>
      find(tenantId, (s) => s.credentialConfigs.find((config) => config.id === id)),
    presentationConfig: (tenantId: string, id: string) =>
      find(tenantId, (s) => s.presentationConfigs.find((config) => config.id === id)),
    client: (tenantId: string, clientId: string) =>
      find(tenantId, (s) => s.clients.find((client) => client.clientId === clientId)),
  }
}
export type TenantCache = ReturnType<typeof createTenantCache>
