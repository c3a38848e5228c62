import { newId } from '@credential-service/core-domain'
import { announceTenantChange } from '../changes'
import type { Executor } from '../database'
import { auditLog } from '../schema'

export interface AuditEntry {
  tenantId: string | null
  actorClientId: string
  action: 'create' | 'update' | 'delete' | 'rotate-secret'
  resourceType:
    | 'tenant'
    | 'client'
    | 'key-chain'
    | 'credential-config'
    | 'presentation-config'
    | 'attribute-provider'
    | 'webhook-endpoint'
  resourceId: string
  /** Never secrets: ids, changed field names. */
  detail?: Record<string, unknown>
}

/** Records a change; every audited change of a tenant is also announced to the caches of all processes. */
export async function recordAudit(tx: Executor, entry: AuditEntry): Promise<void> {
  await tx.insert(auditLog).values({ id: newId('aud'), ...entry, detail: entry.detail ?? null })
  if (entry.tenantId) await announceTenantChange(tx, entry.tenantId)
}
