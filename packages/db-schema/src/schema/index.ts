export type { AuditLogRow } from './audit-log'
export { auditLog } from './audit-log'
export type { ClientRow } from './clients'
export { clients } from './clients'
export type {
  AttributeProviderRow,
  CredentialConfigRow,
  PresentationConfigRow,
  WebhookEndpointRow,
} from './configs'
export { attributeProviders, credentialConfigs, presentationConfigs, webhookEndpoints } from './configs'
export type { IssuanceNotificationRow, IssuanceSessionRow } from './issuance'
export { issuanceNotifications, issuanceSessions, nonces } from './issuance'
export type { KeyChainRow, NewKeyChainRow } from './key-chains'
export { keyChains } from './key-chains'
export type { PresentationSessionRow } from './presentation'
export { presentationSessions } from './presentation'
export { rateLimits } from './rate-limits'
export type { RegistrarConfigRow, RegistrationCertificateRow } from './registrar'
export { registrarConfigs, registrationCertificates } from './registrar'
export type { NewSchemaMetadataVersionRow, SchemaMetadataVersionRow } from './schema-metadata'
export { schemaMetadataVersions } from './schema-metadata'
export { serviceSettings } from './service-settings'
export type { StatusListRow } from './status-lists'
export { statusListEntries, statusLists } from './status-lists'
export type { TenantRow } from './tenants'
export { tenants } from './tenants'
export type { WebhookDeliveryRow } from './webhook-deliveries'
export { webhookDeliveries } from './webhook-deliveries'
