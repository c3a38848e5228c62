export type {
  Client,
  ClientCreate,
  ClientSecretRotate,
  ClientUpdate,
  ClientWithSecret,
  Health,
  Page,
  PageQuery,
  Problem,
  Role,
  Tenant,
  TenantCreate,
  TenantUpdate,
  TokenResponse,
} from '@credential-service/core-domain'
export type { ManagementClient, ManagementClientOptions } from './client'
export { createManagementClient, ManagementApiError } from './client'
