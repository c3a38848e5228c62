export type { Database, DatabaseKind, Executor } from './database'
export type { AuditEntry } from './repositories/audit-log'
export { recordAudit } from './repositories/audit-log'
export type { ClientCredentials, ClientPatch, ClientRepository, NewClient } from './repositories/clients'
export {
  createClientRepository,
  findClientCredentials,
  upsertOperatorClient,
} from './repositories/clients'
export type { TenantRepository } from './repositories/tenants'
export { createTenantRepository } from './repositories/tenants'
export * as schema from './schema'
