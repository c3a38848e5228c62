import type { CredentialConfigInput, PresentationConfigInput } from '@credential-service/core-domain'
import type { ManagementClient } from '@credential-service/sdk'

/** The credential configuration routes of the active tenant (`/api/tenants/{tenantId}/credentials`). */
export function credentialConfigsApi(api: ManagementClient, tenantId: string) {
  return {
    list: (query: { limit: number; cursor?: string }) => api.listCredentialConfigsOfTenant(tenantId, query),
    get: (id: string) => api.getCredentialConfigOfTenant(tenantId, id),
    create: (body: CredentialConfigInput) => api.createCredentialConfigOfTenant(tenantId, body),
    replace: (id: string, body: CredentialConfigInput) =>
      api.replaceCredentialConfigOfTenant(tenantId, id, body),
    remove: (id: string) => api.deleteCredentialConfigOfTenant(tenantId, id),
  }
}

/** The presentation configuration routes of the active tenant (`/api/tenants/{tenantId}/presentations`). */
export function presentationConfigsApi(api: ManagementClient, tenantId: string) {
  return {
    list: (query: { limit: number; cursor?: string }) => api.listPresentationConfigsOfTenant(tenantId, query),
    get: (id: string) => api.getPresentationConfigOfTenant(tenantId, id),
    create: (body: PresentationConfigInput) => api.createPresentationConfigOfTenant(tenantId, body),
    replace: (id: string, body: PresentationConfigInput) =>
      api.replacePresentationConfigOfTenant(tenantId, id, body),
    remove: (id: string) => api.deletePresentationConfigOfTenant(tenantId, id),
  }
}
