import {
  ConflictError,
  type IdentityProviderAdmin,
  isOperator,
  NotFoundError,
  newId,
  type Page,
  type PageQuery,
  type Principal,
  RuleViolationError,
  type Tenant,
  type TenantCreate,
  type TenantUpdate,
} from '@credential-service/core-domain'
import {
  createClientRepository,
  createKeyChainRepository,
  createTenantRepository,
  type Database,
  recordAudit,
} from '@credential-service/db-schema'

/**
 * Tenant management. Operators see every tenant; a tenant-bound client sees only its own. With an
 * identity `provider` (OIDC mode), deleting a tenant deletes its clients there too, so that no
 * client left behind can obtain tokens naming the tenant if it is ever created again.
 */
export function createTenantService(db: Database, provider?: IdentityProviderAdmin) {
  const tenants = createTenantRepository(db)

  async function visible(principal: Principal, id: string): Promise<Tenant> {
    const tenant =
      principal.tenantId === undefined || principal.tenantId === id ? await tenants.get(id) : undefined
    if (!tenant) throw new NotFoundError('tenant', id)
    return tenant
  }

  return {
    async list(principal: Principal, query: PageQuery): Promise<Page<Tenant>> {
      if (isOperator(principal)) return tenants.list(query)
      const own = principal.tenantId === undefined ? undefined : await tenants.get(principal.tenantId)
      return { items: own && query.cursor === undefined ? [own] : [], nextCursor: null }
    },

    get: visible,

    async create(principal: Principal, input: TenantCreate): Promise<Tenant> {
      const id = input.id ?? newId('t').toLowerCase()
      return db.transaction(async (tx) => {
        const created = await tenants.create({ ...input, id }, tx)
        if (!created) throw new ConflictError(`tenant '${id}' already exists`)
        await recordAudit(tx, {
          tenantId: id,
          actorClientId: principal.clientId,
          action: 'create',
          resourceType: 'tenant',
          resourceId: id,
        })
        return created
      })
    },

    async update(principal: Principal, id: string, patch: TenantUpdate): Promise<Tenant> {
      await visible(principal, id)
      const { defaultKeyChainId, ...settings } = patch
      return db.transaction(async (tx) => {
        if (
          defaultKeyChainId !== undefined &&
          !(await createKeyChainRepository(db, id).setDefault(defaultKeyChainId, tx))
        ) {
          const message = `no key chain '${defaultKeyChainId}' in this tenant`
          throw new RuleViolationError(message, [{ path: 'body.defaultKeyChainId', message }])
        }
        const updated = await tenants.update(id, settings, tx)
        if (!updated) throw new NotFoundError('tenant', id)
        await recordAudit(tx, {
          tenantId: id,
          actorClientId: principal.clientId,
          action: 'update',
          resourceType: 'tenant',
          resourceId: id,
          detail: { fields: Object.keys(patch) },
        })
        return updated
      })
    },

    async delete(principal: Principal, id: string): Promise<void> {
      const clients = provider ? await createClientRepository(db, id).all() : []
      await db.transaction(async (tx) => {
        if (!(await tenants.delete(id, tx))) throw new NotFoundError('tenant', id)
        for (const client of clients) await provider?.deleteClient(client.clientId)
        await recordAudit(tx, {
          tenantId: id,
          actorClientId: principal.clientId,
          action: 'delete',
          resourceType: 'tenant',
          resourceId: id,
        })
      })
    },
  }
}
export type TenantService = ReturnType<typeof createTenantService>
