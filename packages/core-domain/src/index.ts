export type {
  AuditAction,
  AuditEvent,
  AuditEventQuery,
  AuditResourceType,
  OperatorAuditEventQuery,
} from './contract/audit'
export {
  AUDIT_ACTIONS,
  AUDIT_RESOURCE_TYPES,
  zAuditEvent,
  zAuditEventQuery,
  zOperatorAuditEventQuery,
} from './contract/audit'
export type {
  AuthServer,
  AuthServerClaimsSource,
  AuthServerData,
  AuthServerInput,
  AuthServerMapping,
  AuthServerTokenCheck,
} from './contract/auth-server'
export {
  AUTH_SERVER_CLAIMS_SOURCES,
  AUTH_SERVER_MAPPINGS,
  AUTH_SERVER_TOKEN_CHECKS,
  zAuthServer,
  zAuthServerInput,
} from './contract/auth-server'
export type {
  Client,
  ClientCreate,
  ClientSecretRotate,
  ClientUpdate,
  ClientWithSecret,
} from './contract/client'
export {
  zClient,
  zClientCreate,
  zClientId,
  zClientSecretRotate,
  zClientUpdate,
  zClientWithSecret,
} from './contract/client'
export type { Page, PageQuery, Problem } from './contract/common'
export { zOAuthError, zPage, zPageQuery, zProblem, zTimestamp } from './contract/common'
export type {
  ClaimField,
  CredentialConfig,
  CredentialConfigBody,
  CredentialConfigData,
  CredentialConfigInput,
  CredentialFormat,
  FieldDisplay,
  FieldType,
  IssuerMetadataConfig,
  IssuerMetadataConfigOf,
  KeyAttestationPolicy,
  LoginClaimSource,
} from './contract/credential-config'
export {
  zClaimField,
  zClaimsJsonSchema,
  zConfigId,
  zCredentialConfig,
  zCredentialConfigInput,
  zCredentialFormat,
  zFieldDisplay,
  zFieldType,
  zIssuerMetadataConfig,
  zKeyAttestationPolicy,
  zLoginClaimSource,
} from './contract/credential-config'
export type {
  CredentialStatusChanged,
  CredentialStatusValue,
  HandleStatusChange,
  SessionStatusChange,
  StatusList,
  StatusListQuery,
} from './contract/credential-status'
export {
  CREDENTIAL_STATUSES,
  zCredentialStatusChanged,
  zCredentialStatusValue,
  zHandleStatusChange,
  zSessionStatusChange,
  zStatusHandle,
  zStatusList,
  zStatusListQuery,
} from './contract/credential-status'
export type { DcqlCredentialQuery, DcqlQuery } from './contract/dcql'
export { zDcqlClaim, zDcqlCredentialQuery, zDcqlCredentialSet, zDcqlQuery } from './contract/dcql'
export type { DcqlClaimQuery } from './contract/dcql-claim'
export type {
  AttributeProvider,
  AttributeProviderData,
  AttributeProviderInput,
  EndpointAuth,
  WebhookEndpoint,
  WebhookEndpointData,
  WebhookEndpointInput,
  WebhookSignatureHeaders,
} from './contract/endpoint'
export {
  WEBHOOK_SIGNATURE_HEADERS,
  withSigningSecret,
  zAttributeProvider,
  zAttributeProviderInput,
  zAttributeProviderWithSecret,
  zEndpointAuth,
  zEndpointAuthInput,
  zSignatureHeaders,
  zWebhookEndpoint,
  zWebhookEndpointInput,
  zWebhookEndpointWithSecret,
} from './contract/endpoint'
export type { FederationAnchor, FederationMembership, FederationMembershipInput } from './contract/federation'
export {
  zEntityId,
  zFederationAnchor,
  zFederationMembership,
  zFederationMembershipInput,
  zFederationTrustMark,
} from './contract/federation'
export type { Health } from './contract/health'
export { zHealth } from './contract/health'
export type { IssuanceSession, OfferCreate, OfferCreated } from './contract/issuance'
export {
  ACCESS_TOKEN_SECONDS,
  AUTHORIZATION_CODE_GRANT,
  buildCredentialOffer,
  ISSUANCE_STATUSES,
  offerGrantServers,
  PRE_AUTHORIZED_CODE_GRANT,
  zIssuanceSession,
  zIssuanceStatus,
  zOfferCreate,
  zOfferCreated,
  zTxCodeSpec,
} from './contract/issuance'
export type {
  KeyChain,
  KeyChainCreate,
  KeyChainRotate,
  KeyChainUpdate,
  KmsProvider,
  RotationPolicy,
  SigningAlgorithm,
} from './contract/key-chain'
export {
  zCertificateMode,
  zKeyChain,
  zKeyChainCreate,
  zKeyChainId,
  zKeyChainRotate,
  zKeyChainUpdate,
  zKmsProvider,
  zPublicKeyInfo,
  zRotationPolicy,
  zSigningAlgorithm,
} from './contract/key-chain'
export type {
  LoginProvider,
  LoginProviderData,
  LoginProviderInput,
  LoginProviderKind,
} from './contract/login-provider'
export { LOGIN_PROVIDER_KINDS, zLoginProvider, zLoginProviderInput } from './contract/login-provider'
export type { MetricsText } from './contract/metrics'
export { zMetricsText } from './contract/metrics'
export type {
  ClientIdPrefix,
  DcApiProtocol,
  DcApiSettings,
  PresentationConfig,
  PresentationConfigData,
  PresentationConfigInput,
  PresentationRequestCreate,
  PresentationRequestCreated,
  PresentationSession,
} from './contract/presentation-config'
export {
  DEFAULT_DC_API_PROTOCOLS,
  zClientIdPrefix,
  zDcApiProtocol,
  zDcApiSettings,
  zPresentationConfig,
  zPresentationConfigInput,
  zPresentationRequestCreate,
  zPresentationRequestCreated,
  zPresentationSession,
  zWebOrigin,
} from './contract/presentation-config'
export type {
  AccessCertificate,
  AccessCertificateRequest,
  RegistrarConfig,
  RegistrarConfigInput,
  RegistrationCertificate,
  RegistrationCertificateRequest,
  RelyingPartyRegistration,
} from './contract/registrar'
export {
  zAccessCertificate,
  zAccessCertificateRequest,
  zRegistrarConfig,
  zRegistrarConfigInput,
  zRegistrarRelyingParty,
  zRegistrationCertificate,
  zRegistrationCertificateRequest,
  zRelyingPartyRegistration,
} from './contract/registrar'
export type {
  SchemaMetadataSign,
  SchemaMetadataSignVersion,
  SignedSchemaMetadata,
  SignedSchemaMetadataVersion,
  SignedTs11SchemaMeta,
  Ts11RegistrarEntry,
  Ts11SchemaMetaConfig,
  TypeMetadata,
} from './contract/schema-metadata'
export {
  zIntegrity,
  zSchemaMetadataSign,
  zSchemaMetadataSignVersion,
  zSemver,
  zSignedSchemaMetadata,
  zSignedSchemaMetadataVersion,
  zSignedTs11SchemaMeta,
  zTs11RegistrarEntry,
  zTs11SchemaMetaConfig,
  zTypeMetadata,
} from './contract/schema-metadata'
export type {
  Session,
  SessionKind,
  SessionListQuery,
  SessionResultRequest,
  SessionStats,
  SessionStatsQuery,
  SessionStatus,
} from './contract/session'
export {
  SESSION_KINDS,
  SESSION_STATS_MAX_DAYS,
  SESSION_STATUSES,
  zSession,
  zSessionEventStream,
  zSessionKind,
  zSessionListQuery,
  zSessionResultRequest,
  zSessionStats,
  zSessionStatsQuery,
  zSessionStatus,
} from './contract/session'
export type { IssuerDisplay, Logo, LogoUpload, Tenant, TenantCreate, TenantUpdate } from './contract/tenant'
export {
  LOGO_CONTENT_TYPES,
  LOGO_MAX_BYTES,
  zCredentialEncryption,
  zIssuerDisplay,
  zIssuerDisplayList,
  zLogo,
  zLogoUpload,
  zTenant,
  zTenantCreate,
  zTenantId,
  zTenantUpdate,
} from './contract/tenant'
export type { AccessTokenClaims, TokenRequest, TokenResponse } from './contract/token'
export {
  zAccessTokenClaims,
  zJwks,
  zManagementAuthorizationServerMetadata,
  zTokenRequest,
  zTokenResponse,
} from './contract/token'
export type {
  OpenIdFederationSource,
  TrustList,
  TrustListData,
  TrustListInput,
  TrustListSource,
} from './contract/trust-list'
export {
  isFetchedTrustListSource,
  TRUST_LIST_STATES,
  zTrustList,
  zTrustListInput,
  zTrustListSource,
  zTrustListStatus,
} from './contract/trust-list'
export type { WalletProvider, WalletProviderData, WalletProviderInput } from './contract/wallet-provider'
export { zWalletProvider, zWalletProviderInput } from './contract/wallet-provider'
export type {
  WebhookDelivery,
  WebhookDeliveryListQuery,
  WebhookDeliveryStatus,
  WebhookEventType,
  WebhookReplayResult,
} from './contract/webhook-delivery'
export {
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENT_TYPES,
  zWebhookDelivery,
  zWebhookDeliveryId,
  zWebhookDeliveryListQuery,
  zWebhookDeliveryStatus,
  zWebhookReplayResult,
} from './contract/webhook-delivery'
export type { DomainErrorCode, ProtocolErrorCode, ValidationIssue } from './errors'
export {
  ConflictError,
  DATABASE_RETRY_AFTER_SECONDS,
  DatabaseUnavailableError,
  DomainError,
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  ProtocolError,
  RateLimitedError,
  RuleViolationError,
  StoredDataUnreadableError,
  UnauthenticatedError,
  UpstreamError,
  UpstreamUnavailableError,
} from './errors'
export { formatMemberIssues } from './formats/config-rules'
export type { ConfigInput, FormatIssue, FormatSpec } from './formats/format-spec'
export { VCDM2_CONTEXT } from './formats/jwt-vc-json/config'
export type { BitstringPurpose } from './formats/jwt-vc-json/status'
export { BITSTRING_PURPOSES, bitstringStatusListUri } from './formats/jwt-vc-json/status'
export { vcTypeKey, vcTypesMatch } from './formats/jwt-vc-json/types'
export type { AnyFormatSpec, DcqlMeta } from './formats/registry'
export {
  allFormatSpecs,
  CREDENTIAL_FORMATS,
  credentialTypeOf,
  dcqlMetaOf,
  formatSpec,
  formatSpecs,
  queriedTypes,
} from './formats/registry'
export { newId } from './ids'
export type { IdentityProviderAdmin, ProviderClient } from './ports/identity-provider'
export type { AuthorizationRequestParamsOptions } from './protocol/authorization-request'
export {
  authorizationRequestByValue,
  authorizationRequestParams,
  dcApiRequestParams,
  dcApiResponseMode,
  RESPONSE_ENC_VALUES,
  VP_FORMATS_SUPPORTED,
} from './protocol/authorization-request'
export { didWebOf, verifierDid } from './protocol/did-web'
export type {
  IaInitialRequest,
  IaPresentationRequest,
  IaResponseMode,
  InteractionType,
} from './protocol/interactive-authorization'
export {
  authorizationCodeResponse,
  IA_AUDIENCE_PREFIX,
  IA_DRAFT,
  IA_ENDPOINT_PATH,
  IA_ERRORS,
  IA_MDOC_HANDOVER,
  IA_METADATA_PARAMETER,
  IA_PARAMETERS,
  IA_RESPONSE_MODES,
  INTERACTION_TYPES,
  iaOrigin,
  isIntermediateRequest,
  parseIaInitialRequest,
  parseIaPresentationRequest,
  presentationRequired,
  webRequired,
  zIaInitialRequest,
  zIaPresentationRequest,
} from './protocol/interactive-authorization'
export type { IaFormResponseMode, IaOutcome, IaWireForm } from './protocol/interactive-authorization-forms'
export {
  chooseFormInteraction,
  IA_FORM,
  IAE_FORM,
  iaAudiences,
  missingFormInteraction,
} from './protocol/interactive-authorization-forms'
export {
  IAE_DRAFT,
  IAE_ENDPOINT_PATH,
  IAE_METADATA_PARAMETER,
  IAE_REQUIRED_METADATA_PARAMETER,
  parseIaeInitialRequest,
} from './protocol/interactive-authorization-iae'
export type { AuthorizationRequest } from './protocol/z-authorization-request'
export {
  parseAuthorizationRequest,
  REQUEST_URI_PREFIX,
  zAuthorizationRequest,
} from './protocol/z-authorization-request'
export type {
  AuthorizationErrorResponse,
  AuthorizationResponse,
  EncryptedAuthorizationResponse,
  ParseResult,
  VpToken,
  VpTokenResponse,
} from './protocol/z-authorization-response'
export {
  safeParseAuthorizationResponse,
  safeParseEncryptedAuthorizationResponse,
  zAuthorizationErrorResponse,
  zAuthorizationResponse,
  zEncryptedAuthorizationResponse,
  zVpToken,
  zVpTokenResponse,
} from './protocol/z-authorization-response'
export type { AuthorizationServerMetadata } from './protocol/z-authorization-server-metadata'
export { zAuthorizationServerMetadata } from './protocol/z-authorization-server-metadata'
export type {
  CredentialConfigurationSupported,
  CredentialIssuerMetadata,
} from './protocol/z-credential-issuer-metadata'
export {
  zCredentialConfigurationSupported,
  zCredentialIssuerMetadata,
  zProofTypeSupported,
} from './protocol/z-credential-issuer-metadata'
export type {
  CredentialRequest,
  CredentialResponseEncryption,
  ParsedProofs,
  ProofType,
} from './protocol/z-credential-request'
export {
  parseCredentialRequest,
  parseProofs,
  proofTypeSchemas,
  zAttestationProofs,
  zCredentialRequest,
  zCredentialResponseEncryption,
  zJwtProofs,
} from './protocol/z-credential-request'
export type { DeferredCredentialRequest } from './protocol/z-deferred-credential-request'
export {
  parseDeferredCredentialRequest,
  zDeferredCredentialRequest,
} from './protocol/z-deferred-credential-request'
export type { NonceResponse } from './protocol/z-nonce-response'
export { zNonceResponse } from './protocol/z-nonce-response'
export type { NotificationRequest } from './protocol/z-notification-request'
export {
  NOTIFICATION_EVENTS,
  parseNotificationRequest,
  zNotificationRequest,
} from './protocol/z-notification-request'
export type { AuthorizationDetail, ParRequest } from './protocol/z-par-request'
export {
  parseParRequest,
  walletRedirectUriProblem,
  zAuthorizationDetail,
  zParRequest,
} from './protocol/z-par-request'
export type { RequestObject, VerifierClientMetadata } from './protocol/z-request-object'
export { zRequestObject, zVerifierClientMetadata, zVerifierInfo } from './protocol/z-request-object'
export type {
  AccessTokenRequest,
  AuthorizationCodeRequest,
  GrantType,
  PreAuthorizedCodeRequest,
  RefreshTokenRequest,
} from './protocol/z-token-request'
export {
  parseAccessTokenRequest,
  zAccessTokenRequest,
  zAuthorizationCodeRequest,
  zPreAuthorizedCodeRequest,
  zRefreshTokenRequest,
} from './protocol/z-token-request'
export type {
  CredentialIssuedEvent,
  CredentialIssuedEventBody,
  IssuanceDeferredEvent,
  IssuanceDeferredEventBody,
  IssuanceExpiredEvent,
  IssuanceExpiredEventBody,
  IssuanceFailedEvent,
  IssuanceFailedEventBody,
  IssuanceFailureReason,
  IssuanceNotificationEvent,
  IssuanceNotificationEventBody,
  PresentationFailedEvent,
  PresentationResultEvent,
  PresentationResultEventBody,
  PresentationStatusEvent,
  PresentationStatusEventBody,
  PresentationStep,
  PresentationVerifiedEvent,
  PresentationVerifiedResponseCodeEvent,
  WebhookEvent,
  WebhookEventBody,
} from './protocol/z-webhook-events'
export {
  EXPIRY_STAGES,
  ISSUANCE_FAILURE_REASONS,
  PRESENTATION_STEPS,
  zCredentialIssuedEvent,
  zIssuanceDeferredEvent,
  zIssuanceExpiredEvent,
  zIssuanceFailedEvent,
  zIssuanceNotificationEvent,
  zPresentationFailedEvent,
  zPresentationResultEvent,
  zPresentationStatusEvent,
  zPresentationVerifiedEvent,
  zPresentationVerifiedResponseCodeEvent,
  zWebhookEvent,
} from './protocol/z-webhook-events'
export type { Principal, Role } from './roles'
export {
  checkClientTenantBinding,
  grantableRoles,
  hasAnyRole,
  isOperator,
  ROLE_DESCRIPTIONS,
  ROLES,
  zRole,
} from './roles'
export type { ClaimsResult } from './rules/claims-schema'
export {
  claimPath,
  defaultClaims,
  deriveClaimsJsonSchema,
  deriveClaimsSchema,
  resolveClaims,
} from './rules/claims-schema'
export { checkCredentialConfig, valueMatches } from './rules/credential-config'
export {
  annexCUnfit,
  checkDcApiSettings,
  dcApiProtocols,
  dcApiProtocolUnfit,
  originIssue,
} from './rules/dc-api'
export { checkDcqlQuery, FEDERATED_ISSUER_FORMATS } from './rules/dcql'
export { isIpAddress, nonPublicRange } from './rules/ip-address'
export { exceedsJsonDepth, MAX_JSON_DEPTH } from './rules/json-depth'
export type { OutboundUrlPolicy } from './rules/outbound-url'
export { checkOutboundUrl, isAllowedHost, normalizeHost } from './rules/outbound-url'
export {
  type KnownCredentialType,
  mapPresentedClaims,
  type PresentedPath,
  presentedClaimIssues,
  presentedPath,
  queriesDisclosing,
} from './rules/presented-claims'
export { checkRedirectUri } from './rules/redirect-uri'
export { findRemovedCredentialFields, findRemovedKeyChainFields } from './rules/removed-fields'
export { SD_JWT_STRUCTURE_NAMES, sdJwtStructureIssues } from './rules/sd-jwt-names'
export { compareSemver, deriveCredentialJsonSchema, deriveTypeMetadata } from './rules/type-metadata'
