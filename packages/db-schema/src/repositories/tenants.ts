import type { IssuerDisplay, PageQuery, Tenant, TenantUpdate } from '@credential-service/core-domain'
import { and, asc, eq, getTableColumns, gt, sql } from 'drizzle-orm'
import type { Database, Executor } from '../database'
import { keyChains, type TenantRow, tenants } from '../schema'
import { decodeCursor, toPage } from './pagination'

type TenantView = TenantRow & { defaultKeyChainId: string | null }

/** A tenant row with the id of its default key chain (the flagged key chain, if any). */
const tenantView = {
  ...getTableColumns(tenants),
  defaultKeyChainId: sql<string | null>`(select ${keyChains.id} from ${keyChains} where ${and(
    eq(keyChains.tenantId, tenants.id),
    eq(keyChains.isDefault, true),
  )})`,
}

function toTenant(row: TenantView): Tenant {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    country: row.country,
    issuerDisplay: row.issuerDisplay,
    defaultKeyChainId: row.defaultKeyChainId,
    presentationRetention: row.presentationRetention as Tenant['presentationRetention'],
    credentialEncryption: row.credentialEncryption as Tenant['credentialEncryption'],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

/** Tenants are the one aggregate not owned by a tenant: only operator routes list them all. */
export function createTenantRepository(db: Database) {
  return {
    async list(query: PageQuery) {
      const after = decodeCursor(query.cursor, 'tenants')
      const rows = await db
        .select(tenantView)
        .from(tenants)
        .where(after === undefined ? undefined : gt(tenants.id, after))
        .orderBy(asc(tenants.id))
        .limit(query.limit + 1)
      return toPage('tenants', rows, query.limit, (r) => r.id, toTenant)
    },

    async get(id: string, tx: Executor = db): Promise<Tenant | undefined> {
      const [row] = await tx.select(tenantView).from(tenants).where(eq(tenants.id, id))
      return row && toTenant(row)
    },

    /** The tenant with its generation, which management tokens carry (never shown by the API). */
    async getWithGeneration(id: string): Promise<{ tenant: Tenant; generation: string } | undefined> {
      const [row] = await db.select(tenantView).from(tenants).where(eq(tenants.id, id))
      return row && { tenant: toTenant(row), generation: row.generation }
    },

    /** Returns undefined when the id is taken. */
    async create(
      input: {
        id: string
        name: string
        description?: string | undefined
        presentationRetention?: string | undefined
        credentialEncryption?: string | undefined
        country?: string | null | undefined
        issuerDisplay?: IssuerDisplay[] | null | undefined
      },
      tx: Executor = db,
    ): Promise<Tenant | undefined> {
      const [row] = await tx
        .insert(tenants)
        .values({
          id: input.id,
          name: input.name,
          description: input.description ?? null,
          presentationRetention: input.presentationRetention ?? 'keep',
          credentialEncryption: input.credentialEncryption ?? 'optional',
          country: input.country ?? null,
          issuerDisplay: input.issuerDisplay ?? null,
        })
        .onConflictDoNothing()
        .returning()
      return row && toTenant({ ...row, defaultKeyChainId: null })
    },

    /** The settings of `patch` (the default key chain is the key chains' flag, set there). */
    async update(
      id: string,
      patch: Omit<TenantUpdate, 'defaultKeyChainId'>,
      tx: Executor = db,
    ): Promise<Tenant | undefined> {
      const [row] = await tx
        .update(tenants)
        .set({ ...patch, updatedAt: new Date() })
        .where(eq(tenants.id, id))
        .returning({ id: tenants.id })
      return row && this.get(id, tx)
    },

    /** Deletes the tenant and, by cascade, everything it owns. */
    async delete(id: string, tx: Executor = db): Promise<boolean> {
      const rows = await tx.delete(tenants).where(eq(tenants.id, id)).returning({ id: tenants.id })
      return rows.length > 0
    },
  }
}
export type TenantRepository = ReturnType<typeof createTenantRepository>
