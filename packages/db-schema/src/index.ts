export {
  ANCHORS_TRUST_LIST_DESCRIPTION,
  ANCHORS_TRUST_LIST_GRACE_SECONDS,
  anchorsTrustListCertificates,
  anchorsTrustListId,
} from './anchor-lists'
export {
  onStatusListChange,
  onTenantChange,
  relayChange,
  statusListChanged,
  TENANT_CHANGES_CHANNEL,
  tenantChanged,
} from './changes'
export type { Database, DatabaseKind, Executor } from './database'
export { isDeadConnectionError } from './dead-connection'
export { QueryDeadlineError } from './query-deadline-error'
export type { DatabaseStats } from './query-stats'
export type { AuditEntry, AuditLogRepository } from './repositories/audit-log'
export { createAuditLogRepository, recordAudit } from './repositories/audit-log'
export type {
  AuthorizationRequestRepository,
  NewAuthorizationRequest,
} from './repositories/authorization'
export {
  createAuthorizationRequestRepository,
  purgeExpiredAuthorizationRequests,
  sessionByIssuerState,
} from './repositories/authorization'
export type { ClientCredentials, ClientPatch, ClientRepository, NewClient } from './repositories/clients'
export {
  createClientRepository,
  findClientCredentials,
  upsertOperatorClient,
} from './repositories/clients'
export type { OwnedRepository } from './repositories/configs'
export {
  createAttributeProviderRepository,
  createAuthServerRepository,
  createCredentialConfigRepository,
  createLoginProviderRepository,
  createPresentationConfigRepository,
  createWalletProviderRepository,
  createWebhookEndpointRepository,
  credentialConfigColumns,
  presentationConfigColumns,
} from './repositories/configs'
export type {
  ConsoleOidcSessionRepository,
  NewConsoleOidcSession,
} from './repositories/console-oidc-sessions'
export { createConsoleOidcSessionRepository } from './repositories/console-oidc-sessions'
export type { ConsoleSessionRecord, ConsoleSessionRepository } from './repositories/console-sessions'
export { createConsoleSessionRepository } from './repositories/console-sessions'
export type { DeferredCredentialRepository, NewDeferredCredential } from './repositories/deferred'
export {
  createCredentialEncryptionKeyRepository,
  createDeferredCredentialRepository,
} from './repositories/deferred'
export { foreignKeyViolation, uniqueViolation } from './repositories/errors'
export type { ExpiredOffer, ExpiredRequest } from './repositories/expiry-claims'
export { claimExpiredOffers, claimExpiredRequests } from './repositories/expiry-claims'
export type { ExternalTokenSessionRepository } from './repositories/external-tokens'
export { createExternalTokenSessionRepository } from './repositories/external-tokens'
export type { FederationMembershipValues, FederationRepository } from './repositories/federation'
export { createFederationRepository } from './repositories/federation'
export type { IssuanceSessionRepository, NewIssuanceSession } from './repositories/issuance'
export { createIssuanceSessionRepository } from './repositories/issuance'
export type { KeyChainPatch, KeyChainRepository } from './repositories/key-chains'
export {
  createKeyChainRepository,
  externalKeyChains,
  forgetExpiredPreviousKeys,
  lockDueKeyChains,
  toKeyChain,
} from './repositories/key-chains'
export type { LegacySessionDataSealer } from './repositories/legacy-session-data'
export { sealLegacySessionData } from './repositories/legacy-session-data'
export { purgeExpiredNonces } from './repositories/nonces'
export { createNotificationRepository } from './repositories/notifications'
export type { NewPresentationSession, PresentationSessionRepository } from './repositories/presentation'
export { createPresentationSessionRepository } from './repositories/presentation'
export type { RateLimitCount, RateLimitHits } from './repositories/rate-limits'
export {
  addRateLimitHits,
  hitRateLimit,
  purgeExpiredRateLimits,
  readRateLimit,
} from './repositories/rate-limits'
export type {
  RegistrarConfigValues,
  RegistrarRepository,
  RegistrationCertificateValues,
} from './repositories/registrar'
export {
  createRegistrarRepository,
  toRegistrarConfig,
  toRegistrationCertificate,
} from './repositories/registrar'
export type { SchemaMetadataVersionRepository } from './repositories/schema-metadata'
export { createSchemaMetadataVersionRepository } from './repositories/schema-metadata'
export {
  lockTenant,
  recordedMasterSecretFingerprint,
  recordMasterSecretFingerprint,
} from './repositories/service-settings'
export type { IssuanceStatsRow, PresentationStatsRow } from './repositories/session-stats'
export { createSessionStatsRepository } from './repositories/session-stats'
export type { SessionWatchRepository } from './repositories/session-watches'
export { createSessionWatchRepository, SESSION_EVENTS_CHANNEL } from './repositories/session-watches'
export type { SessionListFilter, SessionRepository, SessionRow } from './repositories/sessions'
export {
  createSessionRepository,
  dropUnreleasedResults,
  dropUnusableOfferClaims,
  PRESENTATION_LOGIN_CREATOR,
  purgeSessions,
} from './repositories/sessions'
export type {
  AllocatedIndex,
  AllocateOptions,
  EntrySelector,
  StatusChange,
  StatusListRepository,
  StatusListShape,
} from './repositories/status-lists'
export {
  createStatusListRepository,
  STATUS_INVALID,
  STATUS_SUSPENDED,
  STATUS_VALID,
} from './repositories/status-lists'
export type { StoredLogo } from './repositories/tenant-logos'
export { createTenantLogoRepository } from './repositories/tenant-logos'
export type { TenantRepository } from './repositories/tenants'
export { createTenantRepository } from './repositories/tenants'
export type { TrustListFetchResult, TrustListRepository, TrustListUsers } from './repositories/trust-lists'
export {
  claimDueTrustLists,
  createTrustListRepository,
  recordTrustListFetch,
  toTrustList,
  trustListColumns,
  trustListFacts,
  trustListState,
} from './repositories/trust-lists'
export { createJtiRepository, purgeExpiredJtis } from './repositories/used-jtis'
export type {
  DeliveryResult,
  NewWebhookDelivery,
  WebhookDeliveryRepository,
} from './repositories/webhook-deliveries'
export {
  claimDueWebhookDeliveries,
  countWebhookBacklog,
  createWebhookDeliveryRepository,
  enqueueWebhookDelivery,
  finishWebhookDelivery,
  purgeWebhookDeliveries,
  toWebhookDelivery,
} from './repositories/webhook-deliveries'
export type {
  AttributeProviderRow,
  AuthorizationRequestRow,
  AuthServerRow,
  ConsoleOidcSessionRow,
  DeferredCredentialRow,
  FederationMembershipRow,
  IssuanceSessionRow,
  KeyChainRow,
  LoginProviderRow,
  NewKeyChainRow,
  PresentationSessionRow,
  RegistrarConfigRow,
  RegistrationCertificateRow,
  StatusListRow,
  TrustListRow,
  WebhookDeliveryRow,
  WebhookEndpointRow,
} from './schema'
export * as schema from './schema'
export { databaseRefusal, isDatabaseUnavailable } from './unavailable'
