export type { Database, DatabaseKind, Executor } from './database'
export type { AuditEntry } from './repositories/audit-log'
export { recordAudit } from './repositories/audit-log'
export type { ClientCredentials, ClientPatch, ClientRepository, NewClient } from './repositories/clients'
export {
  createClientRepository,
  findClientCredentials,
  upsertOperatorClient,
} from './repositories/clients'
export type { OwnedRepository } from './repositories/configs'
export {
  createAttributeProviderRepository,
  createCredentialConfigRepository,
  createPresentationConfigRepository,
  createWebhookEndpointRepository,
  credentialConfigColumns,
  presentationConfigColumns,
} from './repositories/configs'
export { foreignKeyViolation } from './repositories/errors'
export type { KeyChainPatch, KeyChainRepository } from './repositories/key-chains'
export {
  createKeyChainRepository,
  forgetExpiredPreviousKeys,
  lockDueKeyChains,
  toKeyChain,
} from './repositories/key-chains'
export {
  lockTenant,
  recordedMasterSecretFingerprint,
  recordMasterSecretFingerprint,
} from './repositories/service-settings'
export type { TenantRepository } from './repositories/tenants'
export { createTenantRepository } from './repositories/tenants'
export type { KeyChainRow, NewKeyChainRow } from './schema'
export * as schema from './schema'
