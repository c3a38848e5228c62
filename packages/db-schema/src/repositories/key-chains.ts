import type { KeyChain, PageQuery, SigningAlgorithm } from '@credential-service/core-domain'
import { and, asc, eq, gt, lte, ne, type SQL } from 'drizzle-orm'
import type { Database, Executor } from '../database'
import { type KeyChainRow, keyChains, type NewKeyChainRow } from '../schema'
import { decodeCursor, toPage } from './pagination'

/** The public view of a key chain: no `*_jwk` column ever leaves through it. */
export function toKeyChain(row: KeyChainRow, now: Date = new Date()): KeyChain {
  const previousLive =
    row.previousKid && row.previousPublicJwk && row.previousExpiresAt && row.previousExpiresAt > now
  return {
    id: row.id,
    description: row.description,
    kmsProvider: row.kmsProvider as KeyChain['kmsProvider'],
    externalKeyId: row.externalKeyId,
    algorithm: row.algorithm as SigningAlgorithm,
    certificateMode: row.certificateMode as KeyChain['certificateMode'],
    activeKey: {
      kid: row.activeKid,
      publicJwk: row.activePublicJwk,
      certificateChain: row.activeCertificates,
    },
    previousKey: previousLive
      ? {
          kid: row.previousKid as string,
          publicJwk: row.previousPublicJwk as Record<string, unknown>,
          certificateChain: row.previousCertificates ?? [],
          expiresAt: (row.previousExpiresAt as Date).toISOString(),
        }
      : null,
    rootCertificate: row.rootCertificate,
    rotationPolicy: {
      enabled: row.rotationEnabled,
      intervalDays: row.rotationIntervalDays,
      gracePeriodDays: row.rotationGraceDays,
    },
    rotatedAt: row.rotatedAt?.toISOString() ?? null,
    nextRotationAt: row.nextRotationAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

export type KeyChainPatch = Partial<Omit<NewKeyChainRow, 'tenantId' | 'id' | 'createdAt'>>

/** Key chains of one tenant; another tenant's key chain reads as not found. */
export function createKeyChainRepository(db: Database, tenantId: string) {
  const byId = (id: string): SQL => and(eq(keyChains.tenantId, tenantId), eq(keyChains.id, id)) as SQL

  return {
    async list(query: PageQuery) {
      const after = decodeCursor(query.cursor, 'key_chains')
      const rows = await db
        .select()
        .from(keyChains)
        .where(
          and(eq(keyChains.tenantId, tenantId), after === undefined ? undefined : gt(keyChains.id, after)),
        )
        .orderBy(asc(keyChains.id))
        .limit(query.limit + 1)
      return toPage(
        'key_chains',
        rows,
        query.limit,
        (r) => r.id,
        (r) => toKeyChain(r),
      )
    },

    /** All rows, for publishing the tenant's JWKS. A real promise: callers cache it. */
    async all(tx: Executor = db): Promise<KeyChainRow[]> {
      return await tx
        .select()
        .from(keyChains)
        .where(eq(keyChains.tenantId, tenantId))
        .orderBy(asc(keyChains.id))
    },

    async get(id: string, tx: Executor = db): Promise<KeyChainRow | undefined> {
      const [row] = await tx.select().from(keyChains).where(byId(id))
      return row
    },

    /** Locks the row for the rest of the transaction: concurrent rotations queue behind it. */
    async lock(id: string, tx: Executor): Promise<KeyChainRow | undefined> {
      const [row] = await tx.select().from(keyChains).where(byId(id)).for('update')
      return row
    },

    /** Returns undefined when the id is taken. */
    async insert(row: Omit<NewKeyChainRow, 'tenantId'>, tx: Executor = db): Promise<KeyChainRow | undefined> {
      const [inserted] = await tx
        .insert(keyChains)
        .values({ ...row, tenantId })
        .onConflictDoNothing()
        .returning()
      return inserted
    },

    async update(id: string, patch: KeyChainPatch, tx: Executor = db): Promise<KeyChainRow | undefined> {
      const [row] = await tx
        .update(keyChains)
        .set({ ...patch, updatedAt: new Date() })
        .where(byId(id))
        .returning()
      return row
    },

    /** The tenant's default signing key chain, if it has one. */
    async getDefault(tx: Executor = db): Promise<KeyChainRow | undefined> {
      const [row] = await tx
        .select()
        .from(keyChains)
        .where(and(eq(keyChains.tenantId, tenantId), eq(keyChains.isDefault, true)))
      return row
    },

    /**
     * Makes `id` the tenant's default key chain (or none with null): the flag moves in two
     * statements of the caller's transaction, so the one-default index never sees two.
     * Returns false when `id` is no key chain of the tenant.
     */
    async setDefault(id: string | null, tx: Executor): Promise<boolean> {
      await tx
        .update(keyChains)
        .set({ isDefault: false })
        .where(and(eq(keyChains.tenantId, tenantId), eq(keyChains.isDefault, true)))
      if (id === null) return true
      const rows = await tx
        .update(keyChains)
        .set({ isDefault: true })
        .where(byId(id))
        .returning({ id: keyChains.id })
      return rows.length > 0
    },

    async delete(id: string, tx: Executor = db): Promise<boolean> {
      const rows = await tx.delete(keyChains).where(byId(id)).returning({ id: keyChains.id })
      return rows.length > 0
    },
  }
}
export type KeyChainRepository = ReturnType<typeof createKeyChainRepository>

/**
 * Key chains whose automatic rotation is due, locked with SKIP LOCKED inside `tx`: when several
 * pods run the rotation job at once, each row goes to exactly one of them.
 */
export function lockDueKeyChains(tx: Executor, now: Date, limit: number): Promise<KeyChainRow[]> {
  return tx
    .select()
    .from(keyChains)
    .where(and(eq(keyChains.rotationEnabled, true), lte(keyChains.nextRotationAt, now)))
    .orderBy(asc(keyChains.nextRotationAt))
    .limit(limit)
    .for('update', { skipLocked: true })
}

/** Drops rotated-out keys whose grace period has ended (they are already hidden from JWKS). */
export async function forgetExpiredPreviousKeys(tx: Executor, now: Date): Promise<void> {
  await tx
    .update(keyChains)
    .set({
      previousJwk: null,
      previousKid: null,
      previousPublicJwk: null,
      previousCertificates: null,
      previousCertificateMode: null,
      previousExpiresAt: null,
    })
    .where(lte(keyChains.previousExpiresAt, now))
}

/**
 * Every tenant's key chains held by an external provider, for the start-up check that each
 * provider they need is configured and holds the key (a start refused, not a first wallet).
 */
export function externalKeyChains(
  db: Database,
): Promise<Array<Pick<KeyChainRow, 'tenantId' | 'id' | 'kmsProvider' | 'externalKeyId'>>> {
  return db
    .select({
      tenantId: keyChains.tenantId,
      id: keyChains.id,
      kmsProvider: keyChains.kmsProvider,
      externalKeyId: keyChains.externalKeyId,
    })
    .from(keyChains)
    .where(ne(keyChains.kmsProvider, 'db'))
}
