import {
  type Client,
  type ClientCreate,
  type ClientSecretRotate,
  type ClientUpdate,
  type ClientWithSecret,
  ConflictError,
  checkClientTenantBinding,
  type IdentityProviderAdmin,
  InvalidInputError,
  NotFoundError,
  newId,
  type Page,
  type PageQuery,
  type Principal,
} from '@credential-service/core-domain'
import { generateSecret, hashSecret } from '@credential-service/crypto'
import {
  createClientRepository,
  createTenantRepository,
  type Database,
  recordAudit,
} from '@credential-service/db-schema'

/**
 * API clients of one scope: a tenant, or null for operator clients (spec §2.5, §5 rules 1–3).
 * The secret is bcrypt-hashed and returned only by create and rotate.
 *
 * With an identity `provider` (OIDC mode, spec §5.4) the service's record stays the source of
 * truth for tenant, roles and allowed configurations, and each change is pushed to the provider
 * inside the same transaction (a provider failure rolls the record back). The provider generates
 * and holds the secret: the record keeps the hash of a random value nobody knows, so the secret
 * is never usable against the built-in token endpoint.
 */
export function createClientService(
  db: Database,
  scope: string | null,
  actor: Principal,
  provider?: IdentityProviderAdmin,
) {
  const clients = createClientRepository(db, scope)
  const inProvider = (client: Client) => ({
    clientId: client.clientId,
    tenantId: client.tenantId ?? undefined,
    roles: client.roles,
  })
  const audit = (
    action: 'create' | 'update' | 'delete' | 'rotate-secret',
    clientId: string,
    detail?: Record<string, unknown>,
  ) => ({
    tenantId: scope,
    actorClientId: actor.clientId,
    action,
    resourceType: 'client' as const,
    resourceId: clientId,
    ...(detail ? { detail } : {}),
  })

  async function requireTenant(): Promise<void> {
    if (scope !== null && !(await createTenantRepository(db).get(scope)))
      throw new NotFoundError('tenant', scope)
  }

  function checkBinding(roles: Client['roles']): void {
    const problem = checkClientTenantBinding(roles, scope ?? undefined)
    if (problem) throw new InvalidInputError(problem, [{ path: 'body.roles', message: problem }])
  }

  async function get(clientId: string): Promise<Client> {
    const client = await clients.get(clientId)
    if (!client) throw new NotFoundError('client', clientId)
    return client
  }

  return {
    async list(query: PageQuery): Promise<Page<Client>> {
      await requireTenant()
      return clients.list(query)
    },

    get,

    async create(input: ClientCreate): Promise<ClientWithSecret> {
      await requireTenant()
      checkBinding(input.roles)
      const clientId = input.clientId ?? newId('cli')
      const { clientSecret: chosen, ...fields } = input
      const localSecret = provider ? generateSecret() : (chosen ?? generateSecret())
      const secretHash = await hashSecret(localSecret)
      return db.transaction(async (tx) => {
        const created = await clients.create({ ...fields, clientId, secretHash }, tx)
        if (!created) throw new ConflictError(`client id '${clientId}' is already taken`)
        await recordAudit(tx, audit('create', clientId, { roles: input.roles }))
        const clientSecret = provider
          ? (await provider.createClient(inProvider(created), chosen)).clientSecret
          : localSecret
        return { ...created, clientSecret }
      })
    },

    async update(clientId: string, patch: ClientUpdate): Promise<Client> {
      if (patch.roles) checkBinding(patch.roles)
      return db.transaction(async (tx) => {
        const updated = await clients.update(clientId, patch, tx)
        if (!updated) throw new NotFoundError('client', clientId)
        await recordAudit(tx, audit('update', clientId, { fields: Object.keys(patch) }))
        // Pushed on every update, not only when roles change: it also repairs a drifted client.
        await provider?.updateClient(inProvider(updated))
        return updated
      })
    },

    async rotateSecret(clientId: string, input: ClientSecretRotate): Promise<ClientWithSecret> {
      await get(clientId)
      const localSecret = provider ? generateSecret() : (input.clientSecret ?? generateSecret())
      const secretHash = await hashSecret(localSecret)
      return db.transaction(async (tx) => {
        const updated = await clients.replaceSecret(clientId, secretHash, tx)
        if (!updated) throw new NotFoundError('client', clientId)
        await recordAudit(tx, audit('rotate-secret', clientId))
        const clientSecret = provider
          ? (await provider.rotateSecret(clientId, input.clientSecret)).clientSecret
          : localSecret
        return { ...updated, clientSecret }
      })
    },

    async delete(clientId: string): Promise<void> {
      if (clientId === actor.clientId) throw new ConflictError('a client cannot delete itself')
      await db.transaction(async (tx) => {
        if (!(await clients.delete(clientId, tx))) throw new NotFoundError('client', clientId)
        await recordAudit(tx, audit('delete', clientId))
        await provider?.deleteClient(clientId)
      })
    },
  }
}
