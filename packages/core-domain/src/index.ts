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
export type { Health } from './contract/health'
export { zHealth } from './contract/health'
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
export type { Tenant, TenantCreate, TenantUpdate } from './contract/tenant'
export { zTenant, zTenantCreate, zTenantId, zTenantUpdate } from './contract/tenant'
export type { AccessTokenClaims, TokenRequest, TokenResponse } from './contract/token'
export { zAccessTokenClaims, zTokenRequest, zTokenResponse } from './contract/token'
export type { DomainErrorCode, ProtocolErrorCode, ValidationIssue } from './errors'
export {
  ConflictError,
  DomainError,
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  ProtocolError,
  UnauthenticatedError,
  UpstreamError,
} from './errors'
export { newId } from './ids'
export type { Principal, Role } from './roles'
export { checkClientTenantBinding, hasAnyRole, isOperator, ROLES, zRole } from './roles'
