import {
  ConflictError,
  type IdentityProviderAdmin,
  type ProviderClient,
  UpstreamError,
  UpstreamUnavailableError,
} from '@credential-service/core-domain'
import type KcAdminClient from '@keycloak/keycloak-admin-client'

// The admin client and its HTTP stack (kiota, the OpenTelemetry API: about 150 modules) are loaded
// at the first admin call, so a management process without OIDC never loads them.
type KeycloakModule = typeof import('@keycloak/keycloak-admin-client')
let keycloak: Promise<KeycloakModule> | undefined
const loadKeycloak = () => (keycloak ??= import('@keycloak/keycloak-admin-client'))

type ClientRepresentation = NonNullable<Awaited<ReturnType<KcAdminClient['clients']['findOne']>>>
type MapperRepresentation = NonNullable<ClientRepresentation['protocolMappers']>[number]

export interface KeycloakAdminOptions {
  /** Keycloak base URL as the service reaches it (before `/realms/…`). */
  baseUrl: string
  realm: string
  /** OIDC_CLIENT_ID / OIDC_CLIENT_SECRET: a client whose service account has `manage-clients`. */
  clientId: string
  clientSecret: string
  /** Claim names the tokens must carry (OIDC_TENANT_CLAIM, OIDC_ROLES_CLAIM) and their audience. */
  tenantClaim: string
  rolesClaim: string
  audience: string
  timeoutMs?: number
}

// Mapper names mark what this service owns on a client; it never touches other mappers.
const MAPPER = {
  tenant: 'credential-service-tenant',
  roles: 'credential-service-roles',
  audience: 'credential-service-audience',
} as const

/**
 * The identity-provider port over the Keycloak admin REST API (@keycloak/keycloak-admin-client).
 * Each managed client is confidential, with a service account (client credentials grant) and
 * nothing else; its tokens get tenant and roles from hardcoded-claim mappers and the service's
 * audience from an audience mapper. The admin session is a client credentials token of
 * OIDC_CLIENT_ID, fetched again before it expires (no reliance on refresh tokens).
 */
export function createKeycloakAdmin(options: KeycloakAdminOptions): IdentityProviderAdmin {
  let client: KcAdminClient | undefined
  let session: Promise<void> | undefined

  async function admin(module: KeycloakModule): Promise<KcAdminClient> {
    client ??= new module.default({
      baseUrl: options.baseUrl,
      realmName: options.realm,
      timeout: options.timeoutMs ?? 10_000,
    })
    const kc = client
    if (!session || (kc.accessToken && kc.isTokenExpired())) {
      session = kc.auth({
        grantType: 'client_credentials',
        clientId: options.clientId,
        clientSecret: options.clientSecret,
      })
      session.catch(() => {
        session = undefined
      })
    }
    await session
    return kc
  }

  /** Runs one admin operation, translating transport failures and refusals into domain errors. */
  async function call<T>(
    what: string,
    run: (kc: KcAdminClient, module: KeycloakModule) => Promise<T>,
  ): Promise<T> {
    const module = await loadKeycloak()
    try {
      return await run(await admin(module), module)
    } catch (error) {
      throw translate(what, error, module)
    }
  }

  async function find(kc: KcAdminClient, clientId: string): Promise<ClientRepresentation | undefined> {
    const [found] = await kc.clients.find({ clientId })
    return found
  }

  function mappers(client: ProviderClient): MapperRepresentation[] {
    const claim = (name: string, claimName: string, value: string, type: string): MapperRepresentation => ({
      name,
      protocol: 'openid-connect',
      protocolMapper: 'oidc-hardcoded-claim-mapper',
      config: {
        'claim.name': claimName,
        'claim.value': value,
        'jsonType.label': type,
        'access.token.claim': 'true',
        'introspection.token.claim': 'true',
        'id.token.claim': 'false',
        'userinfo.token.claim': 'false',
      },
    })
    return [
      claim(MAPPER.roles, options.rolesClaim, JSON.stringify(client.roles), 'JSON'),
      ...(client.tenantId === undefined
        ? []
        : [claim(MAPPER.tenant, options.tenantClaim, client.tenantId, 'String')]),
      {
        name: MAPPER.audience,
        protocol: 'openid-connect',
        protocolMapper: 'oidc-audience-mapper',
        config: {
          'included.custom.audience': options.audience,
          'access.token.claim': 'true',
          'introspection.token.claim': 'true',
          'id.token.claim': 'false',
        },
      },
    ]
  }

  const representation = (client: ProviderClient, secret?: string): ClientRepresentation => ({
    clientId: client.clientId,
    description: 'API client of the credential service',
    protocol: 'openid-connect',
    enabled: true,
    publicClient: false,
    clientAuthenticatorType: 'client-secret',
    serviceAccountsEnabled: true,
    standardFlowEnabled: false,
    implicitFlowEnabled: false,
    directAccessGrantsEnabled: false,
    ...(secret === undefined ? {} : { secret }),
  })

  /** Keycloak's PUT /clients/{id} leaves mappers alone: they are synced one by one, by name. */
  async function syncMappers(kc: KcAdminClient, id: string, client: ProviderClient): Promise<void> {
    const existing = await kc.clients.listProtocolMappers({ id })
    const wanted = mappers(client)
    for (const mapper of wanted) {
      const current = existing.find((m) => m.name === mapper.name)
      if (current?.id)
        await kc.clients.updateProtocolMapper({ id, mapperId: current.id }, { ...mapper, id: current.id })
      else await kc.clients.addProtocolMapper({ id }, mapper)
    }
    const owned = new Set<string>(Object.values(MAPPER))
    for (const mapper of existing) {
      if (mapper.id && mapper.name && owned.has(mapper.name) && !wanted.some((m) => m.name === mapper.name))
        await kc.clients.delProtocolMapper({ id, mapperId: mapper.id })
    }
  }

  async function secretOf(kc: KcAdminClient, id: string): Promise<string> {
    const credential = await kc.clients.getClientSecret({ id })
    if (!credential.value) throw new UpstreamError('the identity provider returned no client secret')
    return credential.value
  }

  async function create(kc: KcAdminClient, client: ProviderClient, secret?: string) {
    const { id } = await kc.clients.create({
      ...representation(client, secret),
      protocolMappers: mappers(client),
    })
    return { clientSecret: await secretOf(kc, id) }
  }

  async function update(
    kc: KcAdminClient,
    found: ClientRepresentation,
    client: ProviderClient,
    secret?: string,
  ) {
    const id = found.id as string
    await kc.clients.update({ id }, { ...found, ...representation(client, secret) })
    await syncMappers(kc, id, client)
  }

  return {
    createClient: (client, secret) => call('create the client', (kc) => create(kc, client, secret)),

    updateClient: (client) =>
      call('update the client', async (kc) => {
        const found = await find(kc, client.clientId)
        if (found) await update(kc, found, client)
        else await create(kc, client)
      }),

    rotateSecret: (clientId, secret) =>
      call('rotate the client secret', async (kc) => {
        const found = await find(kc, clientId)
        if (!found?.id) throw new UpstreamError(`the identity provider has no client '${clientId}'`)
        if (secret === undefined) {
          const credential = await kc.clients.generateNewClientSecret({ id: found.id })
          if (!credential.value) throw new UpstreamError('the identity provider returned no client secret')
          return { clientSecret: credential.value }
        }
        await kc.clients.update({ id: found.id }, { ...found, secret })
        return { clientSecret: await secretOf(kc, found.id) }
      }),

    deleteClient: (clientId) =>
      call('delete the client', async (kc, { NetworkError }) => {
        const found = await find(kc, clientId)
        if (!found?.id) return
        try {
          await kc.clients.del({ id: found.id })
        } catch (error) {
          if (!(error instanceof NetworkError && error.response.status === 404)) throw error
        }
      }),

    upsertClient: (client, secret) =>
      call('create or update the root client', async (kc) => {
        const found = await find(kc, client.clientId)
        if (!found) {
          await create(kc, client, secret)
          return 'created'
        }
        await update(kc, found, client, secret)
        return 'updated'
      }),
  }
}

function translate(what: string, error: unknown, { NetworkError }: KeycloakModule): Error {
  if (error instanceof ConflictError || error instanceof UpstreamError) return error
  if (error instanceof NetworkError) {
    const status = error.response.status
    if (status === 409)
      return new ConflictError('the identity provider already has a client with this client id')
    if (status >= 500 || status === 429)
      return new UpstreamUnavailableError(`the identity provider could not ${what} (HTTP ${status})`, {
        cause: error,
      })
    // 401/403: OIDC_CLIENT_ID is refused or lacks the realm-management role manage-clients.
    return new UpstreamError(`the identity provider refused to ${what} (HTTP ${status})`, { cause: error })
  }
  // fetch rejects with a TypeError when the host cannot be reached, and a timeout aborts it.
  return new UpstreamUnavailableError(`the identity provider cannot be reached to ${what}`, { cause: error })
}
