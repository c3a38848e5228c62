import type {
  AttributeProviderDefinition,
  AuthServerDefinition,
  LoginProviderDefinition,
  ManagementClient,
  TrustListDefinition,
  WalletProviderDefinition,
  WebhookEndpointDefinition,
} from '@credential-service/sdk'

/** The attribute provider routes of the active tenant (`/api/tenants/{tenantId}/attribute-providers`). */
export function attributeProvidersApi(api: ManagementClient, tenantId: string) {
  return {
    list: (query: { limit: number; cursor?: string }) => api.listAttributeProvidersOfTenant(tenantId, query),
    create: (body: AttributeProviderDefinition) => api.createAttributeProviderOfTenant(tenantId, body),
    replace: (id: string, body: AttributeProviderDefinition) =>
      api.replaceAttributeProviderOfTenant(tenantId, id, body),
    remove: (id: string) => api.deleteAttributeProviderOfTenant(tenantId, id),
  }
}

/** The login provider routes of the active tenant (`/api/tenants/{tenantId}/login-providers`). */
export function loginProvidersApi(api: ManagementClient, tenantId: string) {
  return {
    list: (query: { limit: number; cursor?: string }) => api.listLoginProvidersOfTenant(tenantId, query),
    create: (body: LoginProviderDefinition) => api.createLoginProviderOfTenant(tenantId, body),
    replace: (id: string, body: LoginProviderDefinition) =>
      api.replaceLoginProviderOfTenant(tenantId, id, body),
    remove: (id: string) => api.deleteLoginProviderOfTenant(tenantId, id),
  }
}

/** The external authorization server routes of the active tenant (`/api/tenants/{tenantId}/auth-servers`). */
export function authServersApi(api: ManagementClient, tenantId: string) {
  return {
    list: (query: { limit: number; cursor?: string }) => api.listAuthServersOfTenant(tenantId, query),
    create: (body: AuthServerDefinition) => api.createAuthServerOfTenant(tenantId, body),
    replace: (id: string, body: AuthServerDefinition) => api.replaceAuthServerOfTenant(tenantId, id, body),
    remove: (id: string) => api.deleteAuthServerOfTenant(tenantId, id),
  }
}

/** The wallet provider routes of the active tenant (`/api/tenants/{tenantId}/wallet-providers`). */
export function walletProvidersApi(api: ManagementClient, tenantId: string) {
  return {
    list: (query: { limit: number; cursor?: string }) => api.listWalletProvidersOfTenant(tenantId, query),
    create: (body: WalletProviderDefinition) => api.createWalletProviderOfTenant(tenantId, body),
    replace: (id: string, body: WalletProviderDefinition) =>
      api.replaceWalletProviderOfTenant(tenantId, id, body),
    remove: (id: string) => api.deleteWalletProviderOfTenant(tenantId, id),
  }
}

/** The webhook endpoint routes of the active tenant, with each endpoint's deliveries. */
export function webhookEndpointsApi(api: ManagementClient, tenantId: string) {
  return {
    list: (query: { limit: number; cursor?: string }) => api.listWebhookEndpointsOfTenant(tenantId, query),
    create: (body: WebhookEndpointDefinition) => api.createWebhookEndpointOfTenant(tenantId, body),
    replace: (id: string, body: WebhookEndpointDefinition) =>
      api.replaceWebhookEndpointOfTenant(tenantId, id, body),
    remove: (id: string) => api.deleteWebhookEndpointOfTenant(tenantId, id),
  }
}

/** The trust list routes of the active tenant (`/api/tenants/{tenantId}/trust-lists`). */
export function trustListsApi(api: ManagementClient, tenantId: string) {
  return {
    list: (query: { limit: number; cursor?: string }) => api.listTrustListsOfTenant(tenantId, query),
    create: (body: TrustListDefinition) => api.createTrustListOfTenant(tenantId, body),
    replace: (id: string, body: TrustListDefinition) => api.replaceTrustListOfTenant(tenantId, id, body),
    remove: (id: string) => api.deleteTrustListOfTenant(tenantId, id),
  }
}
