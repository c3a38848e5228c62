import type { ClientCreate, ClientSecretRotate, ClientUpdate } from '@credential-service/core-domain'
import type { ManagementClient } from '@credential-service/sdk'

/**
 * The client routes of a scope: a tenant's (`/api/tenants/{tenantId}/clients`), or, for an operator
 * without a picked tenant, the operator clients (`/api/clients` with an operator token).
 */
export function clientsApi(api: ManagementClient, tenantId: string | undefined) {
  return tenantId === undefined
    ? {
        list: (query: { limit: number; cursor?: string }) => api.listClients(query),
        create: (body: ClientCreate) => api.createClient(body),
        update: (clientId: string, body: ClientUpdate) => api.updateClient(clientId, body),
        rotate: (clientId: string, body: ClientSecretRotate) => api.rotateClientSecret(clientId, body),
        remove: (clientId: string) => api.deleteClient(clientId),
      }
    : {
        list: (query: { limit: number; cursor?: string }) => api.listClientsOfTenant(tenantId, query),
        create: (body: ClientCreate) => api.createClientOfTenant(tenantId, body),
        update: (clientId: string, body: ClientUpdate) => api.updateClientOfTenant(tenantId, clientId, body),
        rotate: (clientId: string, body: ClientSecretRotate) =>
          api.rotateClientSecretOfTenant(tenantId, clientId, body),
        remove: (clientId: string) => api.deleteClientOfTenant(tenantId, clientId),
      }
}
