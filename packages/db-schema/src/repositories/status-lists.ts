import { randomBytes, randomInt } from 'node:crypto'
import { newId, type Page, type StatusListQuery } from '@credential-service/core-domain'
import { and, asc, eq, gt, inArray, ne, type SQL, sql } from 'drizzle-orm'
import { announceStatusListChange, statusListChanged } from '../changes'
import type { Database, Executor } from '../database'
import { type StatusListRow, statusListEntries, statusLists } from '../schema'
import { decodeCursor, toPage } from './pagination'
import { rowsOf } from './rows'

/** Entry values (draft-ietf-oauth-status-list §7.1). */
export const STATUS_VALID = 0
export const STATUS_INVALID = 1
export const STATUS_SUSPENDED = 2

/** The shape of new lists: entries, bits per entry, and how many entries are handed out. */
export interface StatusListShape {
  size: number
  bits: 1 | 2 | 4 | 8
  capacity: number
}

export interface AllocateOptions {
  keyChainId: string
  /** Indexes to hand out: one per credential of a batch. */
  count: number
  sessionId: string
  credentialConfigurationId: string
  handle: string | null
  shape: StatusListShape
}

export interface AllocatedIndex {
  listId: string
  idx: number
}

/** Which entries a status change touches: every credential of a session, or of a business handle. */
export type EntrySelector = { sessionId: string } | { handle: string }

export type StatusChange =
  | { outcome: 'none' }
  | { outcome: 'revoked-is-final' }
  | { outcome: 'changed'; credentials: number; changed: number }

/** Rounds of random picks before giving up; at most half-full lists make each pick a coin toss at worst. */
const PICK_ROUNDS = 64

/** Status lists and their entries, of one tenant. */
export function createStatusListRepository(db: Database, tenantId: string) {
  const selectorCondition = (selector: EntrySelector): SQL =>
    and(
      eq(statusListEntries.tenantId, tenantId),
      'sessionId' in selector
        ? eq(statusListEntries.sessionId, selector.sessionId)
        : eq(statusListEntries.handle, selector.handle),
    ) as SQL

  /** Random fractions for picks on a list of unknown size: `floor(r × size)`, 48 random bits each. */
  const fractions = (count: number) =>
    Array.from({ length: count }, () => randomBytes(6).readUIntBE(0, 6) / 2 ** 48)

  /**
   * Reserves `count` places on the oldest list of the key chain with room and claims `count`
   * random indexes of it, in one statement: the conditional UPDATE orders concurrent reservations
   * (the row lock), so a list is never overfilled, and the entries' primary key refuses an index
   * any pod holds (those are drawn again on the reserved list). Undefined when no list has room.
   */
  async function reserveAndPick(
    options: AllocateOptions,
  ): Promise<{ list: Pick<StatusListRow, 'id' | 'size'>; picked: number[] } | undefined> {
    const { keyChainId, count } = options
    const picks = `{${fractions(count).join(',')}}`
    const result = await db.execute(sql`
      with list as (
        update ${statusLists} set allocated = allocated + ${count}::int
        where tenant_id = ${tenantId}
          and id = (select id from ${statusLists}
            where tenant_id = ${tenantId} and key_chain_id = ${keyChainId} and allocated + ${count}::int <= capacity
            order by seq limit 1)
          and allocated + ${count}::int <= capacity
        returning id, size
      ), claimed as (
        insert into ${statusListEntries} (tenant_id, list_id, idx, session_id, credential_configuration_id, handle)
        select distinct ${tenantId}::text, list.id, floor(pick * list.size)::int, ${options.sessionId}::text,
          ${options.credentialConfigurationId}::text, ${options.handle}::text
        from list, unnest(${picks}::float8[]) as pick
        on conflict do nothing
        returning idx
      )
      select list.id, list.size, (select array_agg(idx) from claimed) as picked from list`)
    const rows = rowsOf(result) as { id: string; size: number; picked: number[] | null }[]
    const [row] = rows
    return row && { list: { id: row.id, size: Number(row.size) }, picked: row.picked ?? [] }
  }

  /**
   * Opens the next list of the key chain unless one has room for `count` by now. Two pods opening
   * one at once both try the same `seq`: the unique index lets one list in, and the other pod
   * reserves on it.
   */
  async function open(keyChainId: string, count: number, shape: StatusListShape): Promise<void> {
    if (shape.capacity > shape.size) throw new Error('a list cannot hand out more entries than it holds')
    const ofChain = sql`${statusLists.tenantId} = ${tenantId} and ${statusLists.keyChainId} = ${keyChainId}`
    await db.execute(sql`insert into ${statusLists} (tenant_id, id, key_chain_id, seq, bits, size, capacity)
      select ${tenantId}, ${newId('stl')}, ${keyChainId},
        coalesce((select max(${statusLists.seq}) from ${statusLists} where ${ofChain}), 0) + 1,
        ${shape.bits}, ${shape.size}, ${shape.capacity}
      where not exists (select 1 from ${statusLists} where ${ofChain}
        and ${statusLists.allocated} + ${count} <= ${statusLists.capacity})
      on conflict do nothing`)
  }

  return {
    /**
     * Hands out `count` distinct random indexes of one list (TSL §13.2, HAIP 6.1: unpredictable,
     * never sequential, never reused), opening a new list when the key chain's lists are full.
     * Each index is claimed by inserting its entry: the primary key refuses one that any pod holds,
     * and the refused picks are drawn again.
     */
    async allocate(options: AllocateOptions): Promise<AllocatedIndex[]> {
      if (options.count > options.shape.capacity) throw new Error('a batch larger than a status list')
      let reserved = await reserveAndPick(options)
      for (let attempt = 0; !reserved && attempt < 5; attempt++) {
        await open(options.keyChainId, options.count, options.shape)
        reserved = await reserveAndPick(options)
      }
      if (!reserved) throw new Error('no status list could be opened')
      const { list } = reserved
      const picked = [...reserved.picked]
      for (let round = 1; picked.length < options.count; round++) {
        if (round === PICK_ROUNDS) throw new Error(`no free status list index found in ${list.id}`)
        const candidates = new Set<number>()
        while (candidates.size < options.count - picked.length) {
          const idx = randomInt(list.size)
          if (!picked.includes(idx)) candidates.add(idx)
        }
        const inserted = await db
          .insert(statusListEntries)
          .values(
            [...candidates].map((idx) => ({
              tenantId,
              listId: list.id,
              idx,
              sessionId: options.sessionId,
              credentialConfigurationId: options.credentialConfigurationId,
              handle: options.handle,
            })),
          )
          .onConflictDoNothing()
          .returning({ idx: statusListEntries.idx })
        picked.push(...inserted.map((row) => row.idx))
      }
      return picked.map((idx) => ({ listId: list.id, idx }))
    },

    /** The tenant's lists by id, optionally of one key chain (a page of `toPage`). */
    async list(query: StatusListQuery): Promise<Page<StatusListRow>> {
      const after = decodeCursor(query.cursor, 'status_lists')
      const rows = await db
        .select()
        .from(statusLists)
        .where(
          and(
            eq(statusLists.tenantId, tenantId),
            query.keyChainId ? eq(statusLists.keyChainId, query.keyChainId) : undefined,
            after === undefined ? undefined : gt(statusLists.id, after),
          ),
        )
        .orderBy(asc(statusLists.id))
        .limit(query.limit + 1)
      return toPage(
        'status_lists',
        rows,
        query.limit,
        (row) => row.id,
        (row) => row,
      )
    },

    async get(id: string): Promise<StatusListRow | undefined> {
      const [row] = await db
        .select()
        .from(statusLists)
        .where(and(eq(statusLists.tenantId, tenantId), eq(statusLists.id, id)))
      return row
    },

    /** The entries of a list that are not VALID (the others need no row to be read). */
    async setEntries(listId: string): Promise<{ idx: number; status: number }[]> {
      return db
        .select({ idx: statusListEntries.idx, status: statusListEntries.status })
        .from(statusListEntries)
        .where(
          and(
            eq(statusListEntries.tenantId, tenantId),
            eq(statusListEntries.listId, listId),
            ne(statusListEntries.status, STATUS_VALID),
          ),
        )
    },

    /** Keeps a signed token of `version`; a token of a version that has moved on is not kept. */
    async storeToken(listId: string, version: number, token: string, signedAt: Date): Promise<void> {
      await db
        .update(statusLists)
        .set({ token, tokenVersion: version, tokenSignedAt: signedAt })
        .where(
          and(
            eq(statusLists.tenantId, tenantId),
            eq(statusLists.id, listId),
            eq(statusLists.version, version),
          ),
        )
    },

    /** The entries of a session or handle, with their lists. */
    async entries(selector: EntrySelector) {
      return db
        .select({
          listId: statusListEntries.listId,
          idx: statusListEntries.idx,
          status: statusListEntries.status,
          credentialConfigurationId: statusListEntries.credentialConfigurationId,
        })
        .from(statusListEntries)
        .where(selectorCondition(selector))
        .orderBy(asc(statusListEntries.listId), asc(statusListEntries.idx))
    },

    /**
     * Sets the status of every entry of a session or handle, in one transaction with the entries
     * locked: revocation is final (a revoked entry never changes again, and asking to make it
     * valid or suspended is refused), and the lists that changed move to a new version.
     * `afterChange` runs in the same transaction (the audit record).
     */
    async change(
      selector: EntrySelector,
      status: number,
      afterChange: (tx: Executor, changed: number) => Promise<void>,
    ): Promise<StatusChange> {
      const result = await db.transaction(async (tx) => {
        const current = await tx
          .select({ listId: statusListEntries.listId, status: statusListEntries.status })
          .from(statusListEntries)
          .where(selectorCondition(selector))
          .for('update')
        if (current.length === 0) return { outcome: 'none' as const }
        if (status !== STATUS_INVALID && current.some((entry) => entry.status === STATUS_INVALID))
          return { outcome: 'revoked-is-final' as const }
        const changed = await tx
          .update(statusListEntries)
          .set({ status, updatedAt: sql`now()` })
          .where(and(selectorCondition(selector), ne(statusListEntries.status, status)))
          .returning({ listId: statusListEntries.listId })
        const lists = [...new Set(changed.map((entry) => entry.listId))]
        if (lists.length) {
          await tx
            .update(statusLists)
            .set({ version: sql`${statusLists.version} + 1`, updatedAt: sql`now()` })
            .where(and(eq(statusLists.tenantId, tenantId), inArray(statusLists.id, lists)))
          await announceStatusListChange(tx, tenantId)
        }
        await afterChange(tx, changed.length)
        return { outcome: 'changed' as const, credentials: current.length, changed: changed.length }
      })
      // Committed: this process's verifier caches drop the tenant's lists (F-35); others hear NOTIFY.
      if (result.outcome === 'changed' && result.changed > 0) statusListChanged(tenantId)
      return result
    },
  }
}
export type StatusListRepository = ReturnType<typeof createStatusListRepository>
