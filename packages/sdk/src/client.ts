import type {
  Client,
  ClientCreate,
  ClientSecretRotate,
  ClientUpdate,
  ClientWithSecret,
  Health,
  Page,
  Problem,
  Tenant,
  TenantCreate,
  TenantUpdate,
  TokenResponse,
} from '@credential-service/core-domain'

export interface ManagementClientOptions {
  /** Base URL of the service, e.g. `https://credentials.example.com`. */
  baseUrl: string
  clientId: string
  clientSecret: string
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch
}

/** A non-2xx answer of the management API, with its RFC 9457 problem details. */
export class ManagementApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem | { error: string; error_description?: string },
  ) {
    super('detail' in problem && problem.detail ? problem.detail : `management API answered ${status}`)
    this.name = 'ManagementApiError'
  }
}

type ListQuery = { limit?: number; cursor?: string }

/**
 * Typed client of the management API. Gets and renews access tokens with the client
 * credentials grant; method names are the OpenAPI `operationId`s.
 */
export function createManagementClient(options: ManagementClientOptions) {
  const doFetch = options.fetch ?? fetch
  const base = options.baseUrl.replace(/\/+$/, '')
  let token: { value: string; expiresAt: number } | undefined

  async function accessToken(): Promise<string> {
    if (token && token.expiresAt > Date.now() + 30_000) return token.value
    const response = await doFetch(`${base}/api/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: options.clientId,
        client_secret: options.clientSecret,
      }),
    })
    const body = (await response.json()) as TokenResponse
    if (!response.ok) throw new ManagementApiError(response.status, body as unknown as Problem)
    token = { value: body.access_token, expiresAt: Date.now() + body.expires_in * 1000 }
    return token.value
  }

  async function call<T>(method: string, path: string, body?: unknown, query?: ListQuery): Promise<T> {
    const search = new URLSearchParams()
    if (query?.limit !== undefined) search.set('limit', String(query.limit))
    if (query?.cursor !== undefined) search.set('cursor', query.cursor)
    const url = `${base}${path}${search.size ? `?${search}` : ''}`
    const response = await doFetch(url, {
      method,
      headers: {
        authorization: `Bearer ${await accessToken()}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    if (response.status === 204) return undefined as T
    const parsed = (await response.json()) as unknown
    if (!response.ok) throw new ManagementApiError(response.status, parsed as Problem)
    return parsed as T
  }

  const enc = encodeURIComponent
  const clientsPath = (tenantId: string | undefined) =>
    tenantId === undefined ? '/api/clients' : `/api/tenants/${enc(tenantId)}/clients`

  return {
    getHealth: () => call<Health>('GET', '/api/health'),
    listTenants: (query?: ListQuery) => call<Page<Tenant>>('GET', '/api/tenants', undefined, query),
    createTenant: (input: TenantCreate) => call<Tenant>('POST', '/api/tenants', input),
    getTenant: (tenantId: string) => call<Tenant>('GET', `/api/tenants/${enc(tenantId)}`),
    updateTenant: (tenantId: string, patch: TenantUpdate) =>
      call<Tenant>('PATCH', `/api/tenants/${enc(tenantId)}`, patch),
    deleteTenant: (tenantId: string) => call<void>('DELETE', `/api/tenants/${enc(tenantId)}`),
    /** `tenantId` undefined: the token's own tenant (operator clients for an operator). */
    listClients: (tenantId?: string, query?: ListQuery) =>
      call<Page<Client>>('GET', clientsPath(tenantId), undefined, query),
    createClient: (input: ClientCreate, tenantId?: string) =>
      call<ClientWithSecret>('POST', clientsPath(tenantId), input),
    getClient: (clientId: string, tenantId?: string) =>
      call<Client>('GET', `${clientsPath(tenantId)}/${enc(clientId)}`),
    updateClient: (clientId: string, patch: ClientUpdate, tenantId?: string) =>
      call<Client>('PATCH', `${clientsPath(tenantId)}/${enc(clientId)}`, patch),
    rotateClientSecret: (clientId: string, input: ClientSecretRotate = {}, tenantId?: string) =>
      call<ClientWithSecret>('POST', `${clientsPath(tenantId)}/${enc(clientId)}/rotate-secret`, input),
    deleteClient: (clientId: string, tenantId?: string) =>
      call<void>('DELETE', `${clientsPath(tenantId)}/${enc(clientId)}`),
  }
}
export type ManagementClient = ReturnType<typeof createManagementClient>
