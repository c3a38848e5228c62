import type { KeyChainCreate, KeyChainRotate, KeyChainUpdate } from '@credential-service/core-domain'
import type { ManagementClient } from '@credential-service/sdk'
import { downloadText } from '../components/download'

/** The key chain routes of the active tenant (`/api/tenants/{tenantId}/key-chains`). */
export function keyChainsApi(api: ManagementClient, tenantId: string) {
  return {
    list: (query: { limit: number; cursor?: string }) => api.listKeyChainsOfTenant(tenantId, query),
    get: (id: string) => api.getKeyChainOfTenant(tenantId, id),
    create: (body: KeyChainCreate) => api.createKeyChainOfTenant(tenantId, body),
    update: (id: string, body: KeyChainUpdate) => api.updateKeyChainOfTenant(tenantId, id, body),
    rotate: (id: string, body: KeyChainRotate) => api.rotateKeyChainOfTenant(tenantId, id, body),
    remove: (id: string) => api.deleteKeyChainOfTenant(tenantId, id),
  }
}

/** Saves a PEM as a file. */
export const downloadPem = (fileName: string, pem: string) =>
  downloadText(fileName, pem, 'application/x-pem-file')
