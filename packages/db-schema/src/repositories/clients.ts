import type { Client, PageQuery, Role } from '@credential-service/core-domain'
import { and, asc, eq, gt, isNull, type SQL } from 'drizzle-orm'
import type { Database, Executor } from '../database'
import { type ClientRow, clients, consoleSessions, tenants } from '../schema'
import { decodeCursor, toPage } from './pagination'
import { param, prepared } from './prepared'

function toClient(row: ClientRow): Client {
  return {
    clientId: row.clientId,
    tenantId: row.tenantId,
    description: row.description,
    roles: row.roles as Role[],
    allowedPresentationConfigs: row.allowedPresentationConfigs,
    allowedIssuanceConfigs: row.allowedIssuanceConfigs,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    secretRotatedAt: row.secretRotatedAt.toISOString(),
  }
}

export interface NewClient {
  clientId: string
  secretHash: string
  description?: string | undefined
  roles: Role[]
  allowedPresentationConfigs?: string[] | null | undefined
  allowedIssuanceConfigs?: string[] | null | undefined
}

export interface ClientPatch {
  description?: string | null | undefined
  roles?: Role[] | undefined
  allowedPresentationConfigs?: string[] | null | undefined
  allowedIssuanceConfigs?: string[] | null | undefined
}

const tenantClient = (db: Database) =>
  prepared(db, 'client_of_tenant', (d) =>
    d
      .select()
      .from(clients)
      .where(and(eq(clients.tenantId, param('tenantId')), eq(clients.clientId, param('clientId')))),
  )

/**
 * Clients of one scope: a tenant id, or null for operator clients. A client of another scope
 * reads as not found.
 */
export function createClientRepository(db: Database, tenantId: string | null) {
  const inScope = (clientId?: string): SQL => {
    const scope = tenantId === null ? isNull(clients.tenantId) : eq(clients.tenantId, tenantId)
    return clientId === undefined ? scope : (and(scope, eq(clients.clientId, clientId)) as SQL)
  }

  return {
    async list(query: PageQuery) {
      const after = decodeCursor(query.cursor, 'clients')
      const rows = await db
        .select()
        .from(clients)
        .where(after === undefined ? inScope() : and(inScope(), gt(clients.clientId, after)))
        .orderBy(asc(clients.clientId))
        .limit(query.limit + 1)
      return toPage('clients', rows, query.limit, (r) => r.clientId, toClient)
    },

    /** Every client of the scope, without secrets (the tenant cache keeps them). */
    async all(): Promise<Client[]> {
      const rows = await db.select().from(clients).where(inScope()).orderBy(asc(clients.clientId))
      return rows.map(toClient)
    },

    async get(clientId: string, tx: Executor = db): Promise<Client | undefined> {
      // Tenant clients are read on every offer and presentation request: a prepared statement.
      const [row] =
        tenantId !== null && tx === db
          ? await tenantClient(db).execute({ tenantId, clientId })
          : await tx.select().from(clients).where(inScope(clientId))
      return row && toClient(row)
    },

    /** Returns undefined when the client id is already taken (in any scope). */
    async create(input: NewClient, tx: Executor = db): Promise<Client | undefined> {
      const [row] = await tx
        .insert(clients)
        .values({
          clientId: input.clientId,
          tenantId,
          secretHash: input.secretHash,
          description: input.description ?? null,
          roles: input.roles,
          allowedPresentationConfigs: input.allowedPresentationConfigs ?? null,
          allowedIssuanceConfigs: input.allowedIssuanceConfigs ?? null,
        })
        .onConflictDoNothing()
        .returning()
      return row && toClient(row)
    },

    async update(clientId: string, patch: ClientPatch, tx: Executor = db): Promise<Client | undefined> {
      const [row] = await tx
        .update(clients)
        .set({ ...patch, updatedAt: new Date() })
        .where(inScope(clientId))
        .returning()
      return row && toClient(row)
    },

    async replaceSecret(
      clientId: string,
      secretHash: string,
      tx: Executor = db,
    ): Promise<Client | undefined> {
      const now = new Date()
      const [row] = await tx
        .update(clients)
        .set({ secretHash, updatedAt: now, secretRotatedAt: now })
        .where(inScope(clientId))
        .returning()
      // A rotation is often a response to a leak: the console sessions of the old secret end too.
      if (row) await tx.delete(consoleSessions).where(eq(consoleSessions.clientId, row.clientId))
      return row && toClient(row)
    },

    async secretHash(clientId: string, tx: Executor = db): Promise<string | undefined> {
      const [row] = await tx.select({ secretHash: clients.secretHash }).from(clients).where(inScope(clientId))
      return row?.secretHash
    },

    async delete(clientId: string, tx: Executor = db): Promise<boolean> {
      const rows = await tx.delete(clients).where(inScope(clientId)).returning({ id: clients.clientId })
      return rows.length > 0
    },
  }
}
export type ClientRepository = ReturnType<typeof createClientRepository>

export interface ClientCredentials {
  client: Client
  secretHash: string
  /** Generation of the client's tenant, for the token; null for operator clients. */
  tenantGeneration: string | null
}

/** The token endpoint's look-up: by client id alone, before any tenant is known. */
export async function findClientCredentials(
  db: Database,
  clientId: string,
): Promise<ClientCredentials | undefined> {
  const [row] = await db
    .select({ client: clients, tenantGeneration: tenants.generation })
    .from(clients)
    .leftJoin(tenants, eq(tenants.id, clients.tenantId))
    .where(eq(clients.clientId, clientId))
  return (
    row && {
      client: toClient(row.client),
      secretHash: row.client.secretHash,
      tenantGeneration: row.tenantGeneration,
    }
  )
}

/**
 * Creates or updates the root operator client from AUTH_CLIENT_ID / AUTH_CLIENT_SECRET (spec §5.3).
 * Refuses to take over a tenant's client of the same id. Safe when processes start together on an
 * empty database: the insert waits for a concurrent one and then finds the row to update.
 */
export async function upsertOperatorClient(
  db: Database,
  input: { clientId: string; secretHash: string; roles: Role[] },
): Promise<'created' | 'updated'> {
  return db.transaction(async (tx) => {
    const inserted = await tx
      .insert(clients)
      .values({ clientId: input.clientId, tenantId: null, secretHash: input.secretHash, roles: input.roles })
      .onConflictDoNothing({ target: clients.clientId })
      .returning({ clientId: clients.clientId })
    if (inserted.length) return 'created'
    const [existing] = await tx
      .select()
      .from(clients)
      .where(eq(clients.clientId, input.clientId))
      .for('update')
    if (!existing) throw new Error(`client '${input.clientId}' was deleted while being written`)
    if (existing.tenantId) {
      throw new Error(
        `client '${input.clientId}' belongs to tenant '${existing.tenantId}' and cannot be the root client`,
      )
    }
    const roles = [...new Set([...(existing.roles as Role[]), ...input.roles])]
    const now = new Date()
    await tx
      .update(clients)
      .set({ secretHash: input.secretHash, roles, updatedAt: now, secretRotatedAt: now })
      .where(eq(clients.clientId, input.clientId))
    return 'updated'
  })
}
