export type { AttributeRequest } from './attribute-provider-client'
export { type AttributeAnswer, fetchAttributes } from './attribute-provider-client'
export type {
  ProviderTenantVerifierOptions,
  ProviderTokenVerifier,
  SecuredRoute,
  VerifyAccessToken,
} from './auth'
export {
  providerTenantVerifier,
  registerRoleGuard,
  requireTenantScope,
  tenantBoundVerifier,
  tokenExpiry,
} from './auth'
export type { ServerOptions } from './create-server'
export { createServer, LOG_REDACT_PATHS } from './create-server'
export { ConfigError, optionalEnv, parseEnv, perMinute, zCommonEnv } from './env'
export { BEARER_REALM, oauthErrorHandler, PROBLEM_CONTENT_TYPE, problemErrorHandler } from './error-handlers'
export type { EntityConfigurationDeps } from './federation/entity-configuration'
export { ENTITY_STATEMENT_TYPE, signEntityConfiguration } from './federation/entity-configuration'
export { federationKeyChainOf } from './federation/entity-key'
export type { FederatedEntityOptions, FederationTrustSource } from './federation/federated-trust'
export {
  FederatedTrustRefusal,
  federatedEntityKeys,
  federationTrustSources,
} from './federation/federated-trust'
export type { OwnEntity, OwnTrustChainDeps } from './federation/own-trust-chain'
export { federationFetch, ownTrustChain, verifierTrustChain } from './federation/own-trust-chain'
export { verifierEntityMetadata } from './federation/verifier-metadata'
export type { HttpLimits } from './http-limits'
export { DEFAULT_HTTP_LIMITS, httpLimits } from './http-limits'
export { findUnstorable } from './input-guard'
export {
  type EtsiTrustedList,
  etsiTrustedLists,
  issuerTrustAnchors,
  keyChainAnchors,
  requestDcqlQuery,
  trustListCertificates,
} from './issuer-anchors'
export type { KeyRuntime, KeyRuntimeOptions, PublishedJwk } from './key-runtime'
export {
  createKeyRuntime,
  missingProviderVariables,
  PROVIDER_VARIABLES,
  providersOf,
  verifyKeyProviders,
  verifyMasterSecret,
} from './key-runtime'
export type { IssuedToken, ManagementTokenOptions, ManagementTokens } from './management-token'
export { registerManagementTokens } from './management-token'
export type {
  AppName,
  FlowMetrics,
  Metrics,
  MetricsOptions,
  WebhookOutboxReader,
} from './metrics'
export {
  createMetrics,
  DEFAULT_TENANT_LABEL_LIMIT,
  METRICS_CONTENT_TYPE,
  NO_TENANT,
  OTHER_TENANT,
} from './metrics'
export type { MetricsEndpointOptions } from './metrics-route'
export { metricsEndpoint, metricsRoute } from './metrics-route'
export { type OpenApiExample, openApiTransform, openApiTransformObject, problemResponses } from './openapi'
export type { OutboundPolicy, OutboundRequest, OutboundResponse, ResolveHost } from './outbound-fetch'
export { outboundFetch } from './outbound-fetch'
export type { OutboundEndpoint } from './outbound-http'
export { authHeaders } from './outbound-http'
export type {
  DcApiTransport,
  PresentationRequestDeps,
  PresentationSessionCreate,
  PresentationSessionCreated,
} from './presentation/create-request'
export {
  createPresentationSession,
  dcApiRequests,
  dcApiTransport,
  requestClientId,
  verifierIdentifierOf,
} from './presentation/create-request'
export { encryptionJwk, type PresentationDeps } from './presentation/deps'
export {
  encryptedResponseMode,
  parseWalletJson,
  readAuthorizationResponse,
  responseParameters,
} from './presentation/response-read'
export { verifierResponseUri } from './presentation/response-uri'
export {
  fetchOpenRequest,
  finishSession,
  finishVerified,
  openSession,
  type ResultFields,
  type SessionOutcome,
  sessionEnding,
  sessionFinished,
} from './presentation/session-end'
export {
  createStatusLists,
  presentationTrust,
  requireValidEntry,
  type StatusCheck,
  type StatusLists,
} from './presentation/status-list'
export type { StatusListCache, StatusListCacheOptions } from './presentation/status-list-cache'
export { verifierInfoOf } from './presentation/verifier-info'
export {
  checkClaims,
  checkCredentialSets,
  type PresentationBinding,
  trustedListAnchors,
  type Verification,
  verification,
  verifyStep,
  verifyVpToken,
} from './presentation/verify'
export type { ProblemCode } from './problem'
export { PROBLEM_ERRORS_LIMIT, PROBLEM_STATUSES, PROBLEM_TYPE_BASE, problem, problemKind } from './problem'
export type { ProtocolAppOptions, ProtocolDeps } from './protocol-app'
export { protocolDeps } from './protocol-app'
export type {
  FailureLimit,
  RateLimitRule,
  RateLimitSetup,
  RateLimitStoreKind,
  WalletLimits,
} from './rate-limit'
export {
  clientIp,
  failureLimit,
  rateLimitStore,
  registerRateLimits,
  requestLimit,
  walletLimit,
  walletLimits,
} from './rate-limit'
export { createSharedCounter, FIRST_HIT_FLUSH_MS, type SharedCounter } from './rate-limit-counter'
export type { RunOptions } from './run'
export { runProcess } from './run'
export {
  appStatusLists,
  outboundPolicy,
  scheduleJob,
  trustListLimits,
  webhookPolicy,
} from './runtime-policies'
export { offerClaims, presentationResult } from './session-data'
export type { TenantCache, TenantCacheOptions, TenantSnapshot } from './tenant-cache'
export { createTenantCache } from './tenant-cache'
export { createTenantMemo, type TenantMemoOptions } from './tenant-memo'
export { tenantMount } from './tenant-mount'
export type { TrustListLimits, TrustListRefreshDeps } from './trust-list-refresh'
export {
  DEFAULT_TRUST_LIST_LIMITS,
  refreshDueTrustLists,
  scheduleTrustListRefresh,
} from './trust-list-refresh'
export { SERVICE_VERSION } from './version'
export type { OutboundLog, SendOptions, SendResult } from './webhook-delivery'
export { sendWebhook } from './webhook-delivery'
export type { WebhookEvent, WebhookOutbox, WebhookOutboxOptions } from './webhook-outbox'
export { createWebhookOutbox, DELIVERY_LEASE_MS } from './webhook-outbox'
