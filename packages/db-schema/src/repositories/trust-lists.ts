import {
  isFetchedTrustListSource,
  type TrustList,
  type TrustListData,
  type TrustListSource,
} from '@credential-service/core-domain'
import { and, arrayContains, asc, eq, inArray, lte, ne, sql } from 'drizzle-orm'
import { announceTenantChange } from '../changes'
import type { Database, Executor } from '../database'
import { presentationConfigs, type TrustListRow, trustLists, walletProviders } from '../schema'
import { owned } from './configs'

const iso = (date: Date | null) => date?.toISOString() ?? null

/** Whether a list's content may be used at `now`: fetched, and not past nextUpdate + grace (fail closed). */
export function trustListState(row: TrustListRow, now: Date): 'current' | 'pending' | 'expired' {
  if (!isFetchedTrustListSource(row.source)) return 'current'
  if (!row.fetchedAt) return 'pending'
  if (row.nextUpdate && now.getTime() > row.nextUpdate.getTime() + row.graceSeconds * 1000) return 'expired'
  return 'current'
}

export function toTrustList(row: TrustListRow, now = new Date()): TrustList {
  return {
    id: row.id,
    description: row.description,
    source: row.source,
    graceSeconds: row.graceSeconds,
    status: {
      state: trustListState(row, now),
      certificateCount: row.certificates.length,
      listIssuedAt: iso(row.listIssuedAt),
      nextUpdate: iso(row.nextUpdate),
      fetchedAt: iso(row.fetchedAt),
      nextRefreshAt: iso(row.nextRefreshAt),
      lastError: row.lastError,
      lastErrorAt: iso(row.lastErrorAt),
    },
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

/**
 * Columns of a saved list. A `pem` list holds its certificates at once; a fetched list keeps its
 * last good content while its source stays the same, and is due for a fetch at once when new or
 * changed (the content of another URL or signer must never be kept).
 */
export function trustListColumns(input: TrustListData, previous: TrustListRow | undefined, now: Date) {
  const common = { id: input.id, description: input.description ?? null, graceSeconds: input.graceSeconds }
  if (!isFetchedTrustListSource(input.source)) {
    return {
      ...common,
      source: input.source,
      certificates: input.source.type === 'pem' ? input.source.certificates : [],
      listIssuedAt: null,
      nextUpdate: null,
      fetchedAt: null,
      lastError: null,
      lastErrorAt: null,
      nextRefreshAt: null,
    }
  }
  // What was fetched stays only while the same list is read the same way (refreshSeconds may change).
  const sameList = (source: TrustListSource) =>
    JSON.stringify([
      source.type,
      'url' in source ? source.url : null,
      'signerCertificates' in source ? source.signerCertificates : null,
      'serviceTypes' in source ? (source.serviceTypes ?? null) : null,
      'territories' in source ? (source.territories ?? null) : null,
    ])
  if (previous && sameList(previous.source) === sameList(input.source))
    return { ...common, source: input.source }
  return {
    ...common,
    source: input.source,
    certificates: [],
    listIssuedAt: null,
    nextUpdate: null,
    fetchedAt: null,
    lastError: null,
    lastErrorAt: null,
    nextRefreshAt: now,
  }
}

/** What names a trust list in its `trustListIds`, by id. */
export interface TrustListUsers {
  presentationConfigs: string[]
  walletProviders: string[]
}

export function createTrustListRepository(db: Database, tenantId: string) {
  return {
    ...owned<TrustListRow, TrustList>(db, trustLists as never, tenantId, (row) => toTrustList(row)),
    /** The tenant's lists as stored (the verifier picks the current ones per presentation). */
    rows(tx: Executor = db): Promise<TrustListRow[]> {
      return tx.select().from(trustLists).where(eq(trustLists.tenantId, tenantId)).orderBy(asc(trustLists.id))
    },
    /** How many fetched lists (not `pem` nor `openid-federation`) the tenant holds, `except` one id (the list being replaced). */
    async countFetched(except: string, tx: Executor = db): Promise<number> {
      const [row] = await tx
        .select({ count: sql<number>`count(*)::int` })
        .from(trustLists)
        .where(
          and(
            eq(trustLists.tenantId, tenantId),
            ne(trustLists.id, except),
            sql`${trustLists.source}->>'type' not in ('pem', 'openid-federation')`,
          ),
        )
      return row?.count ?? 0
    },
    /**
     * Locks the named lists against deletion until `tx` ends (FOR SHARE) and returns the ids that
     * exist: a configuration saved with them cannot lose a list between check and commit.
     */
    async lockExisting(ids: string[], tx: Executor): Promise<Set<string>> {
      if (!ids.length) return new Set()
      const rows = await tx
        .select({ id: trustLists.id })
        .from(trustLists)
        .where(and(eq(trustLists.tenantId, tenantId), inArray(trustLists.id, ids)))
        .for('share')
      return new Set(rows.map((row) => row.id))
    },
    /**
     * Locks the list (FOR UPDATE: waits for saves holding it FOR SHARE) and names the presentation
     * configurations and wallet providers that reference it; undefined when the list does not exist.
     */
    async lockForDelete(id: string, tx: Executor): Promise<TrustListUsers | undefined> {
      const [row] = await tx
        .select({ id: trustLists.id })
        .from(trustLists)
        .where(and(eq(trustLists.tenantId, tenantId), eq(trustLists.id, id)))
        .for('update')
      if (!row) return undefined
      const [configs, providers] = await Promise.all([
        tx
          .select({ id: presentationConfigs.id })
          .from(presentationConfigs)
          .where(
            and(
              eq(presentationConfigs.tenantId, tenantId),
              arrayContains(presentationConfigs.trustListIds, [id]),
            ),
          ),
        tx
          .select({ id: walletProviders.id })
          .from(walletProviders)
          .where(
            and(eq(walletProviders.tenantId, tenantId), arrayContains(walletProviders.trustListIds, [id])),
          ),
      ])
      return {
        presentationConfigs: configs.map((user) => user.id),
        walletProviders: providers.map((user) => user.id),
      }
    },
  }
}
export type TrustListRepository = ReturnType<typeof createTrustListRepository>

/**
 * Claims up to `limit` fetched lists whose refresh is due, across all tenants: their next refresh
 * moves one interval ahead in the same statement, and SKIP LOCKED keeps two processes from
 * claiming one row, so each list is fetched once per interval however many processes run the job.
 */
export async function claimDueTrustLists(db: Database, now: Date, limit: number): Promise<TrustListRow[]> {
  const due = db
    .select({ tenantId: trustLists.tenantId, id: trustLists.id })
    .from(trustLists)
    .where(lte(trustLists.nextRefreshAt, now))
    .orderBy(asc(trustLists.nextRefreshAt))
    .limit(limit)
    .for('update', { skipLocked: true })
  return db
    .update(trustLists)
    .set({
      nextRefreshAt: sql`${now.toISOString()}::timestamptz + make_interval(secs => coalesce((${trustLists.source}->>'refreshSeconds')::int, 3600))`,
    })
    .where(sql`(${trustLists.tenantId}, ${trustLists.id}) in (${due})`)
    .returning()
}

export interface TrustListFetchResult {
  certificates: string[]
  listIssuedAt: Date | null
  nextUpdate: Date | null
}

/**
 * Records a fetch of a claimed list. Good content replaces the stored one; a failure keeps the
 * last good content and records why. Only while the source is the one fetched (a replace during
 * the fetch wins). Announces the change so every process's tenant cache reads the new content.
 */
export async function recordTrustListFetch(
  db: Database,
  claimed: TrustListRow,
  result: { ok: TrustListFetchResult } | { error: string },
  now: Date,
): Promise<void> {
  await db.transaction(async (tx) => {
    const values =
      'ok' in result
        ? { ...result.ok, fetchedAt: now, lastError: null, lastErrorAt: null }
        : { lastError: result.error.slice(0, 1000), lastErrorAt: now }
    const updated = await tx
      .update(trustLists)
      .set(values)
      .where(
        and(
          eq(trustLists.tenantId, claimed.tenantId),
          eq(trustLists.id, claimed.id),
          sql`${trustLists.source} = ${JSON.stringify(claimed.source)}::jsonb`,
        ),
      )
      .returning({ id: trustLists.id })
    if (updated.length) await announceTenantChange(tx, claimed.tenantId)
  })
}

/** Every list's tenant, id, state facts for the metrics scrape. */
export function trustListFacts(db: Database) {
  return db
    .select({
      tenantId: trustLists.tenantId,
      id: trustLists.id,
      listIssuedAt: trustLists.listIssuedAt,
      fetchedAt: trustLists.fetchedAt,
    })
    .from(trustLists)
}
