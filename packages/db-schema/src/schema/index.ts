export type { AuditLogRow } from './audit-log'
export { auditLog } from './audit-log'
export type { AuthorizationRequestRow } from './authorization'
export { AUTHORIZATION_REQUEST_STATUSES, authorizationRequests } from './authorization'
export type { ClientRow } from './clients'
export { clients } from './clients'
export type {
  AttributeProviderRow,
  AuthServerRow,
  CredentialConfigRow,
  LoginProviderRow,
  PresentationConfigRow,
  WebhookEndpointRow,
} from './configs'
export {
  attributeProviders,
  authServers,
  credentialConfigs,
  loginProviders,
  presentationConfigs,
  webhookEndpoints,
} from './configs'
export type { ConsoleOidcSessionRow, ConsoleSessionRow } from './console-sessions'
export { consoleOidcSessions, consoleSessions } from './console-sessions'
export type { CredentialEncryptionKeyRow, DeferredCredentialRow } from './deferred'
export { credentialEncryptionKeys, deferredCredentials } from './deferred'
export type { FederationAnchorValue, FederationMembershipRow, FederationTrustMarkValue } from './federation'
export { federationMemberships } from './federation'
export type { IssuanceNotificationRow, IssuanceSessionRow } from './issuance'
export { ISSUANCE_SESSION_STATUSES, issuanceNotifications, issuanceSessions, nonces } from './issuance'
export type { KeyChainRow, NewKeyChainRow } from './key-chains'
export { keyChains } from './key-chains'
export type { PresentationSessionRow } from './presentation'
export { PRESENTATION_SESSION_STATUSES, presentationSessions } from './presentation'
export { rateLimits } from './rate-limits'
export type { RegistrarConfigRow, RegistrationCertificateRow } from './registrar'
export { registrarConfigs, registrationCertificates } from './registrar'
export type { NewSchemaMetadataVersionRow, SchemaMetadataVersionRow } from './schema-metadata'
export { schemaMetadataVersions } from './schema-metadata'
export { serviceSettings } from './service-settings'
export { sessionWatches } from './session-watches'
export type { StatusListRow } from './status-lists'
export { statusListEntries, statusLists } from './status-lists'
export { tenantLogos } from './tenant-logos'
export type { TenantRow } from './tenants'
export { tenants } from './tenants'
export type { TrustListRow } from './trust-lists'
export { trustLists } from './trust-lists'
export type { WalletProviderRow } from './wallet-providers'
export { usedJtis, walletProviders } from './wallet-providers'
export type { WebhookDeliveryRow } from './webhook-deliveries'
export { webhookDeliveries } from './webhook-deliveries'
