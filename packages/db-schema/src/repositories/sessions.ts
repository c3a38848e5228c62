import type { Page, SessionKind, SessionListQuery, SessionStatus } from '@credential-service/core-domain'
import {
  and,
  arrayContains,
  desc,
  eq,
  gt,
  gte,
  inArray,
  isNotNull,
  like,
  lt,
  lte,
  or,
  type SQL,
  sql,
} from 'drizzle-orm'
import type { Database, Executor } from '../database'
import {
  ISSUANCE_SESSION_STATUSES,
  type IssuanceSessionRow,
  issuanceNotifications,
  issuanceSessions,
  PRESENTATION_SESSION_STATUSES,
  type PresentationSessionRow,
  presentationSessions,
  webhookDeliveries,
} from '../schema'
import { deleteExpiredBatch } from './delete-expired-batch'
import { afterKey, compareKeys, decodeKeyCursor, keyCursorText, type ListKey, toKeyPage } from './pagination'

export type SessionRow =
  | { kind: 'issuance'; row: IssuanceSessionRow }
  | { kind: 'presentation'; row: PresentationSessionRow }

export interface SessionListFilter extends Omit<SessionListQuery, 'kind'> {
  /** Kinds to list (the caller's roles and the `kind` filter decide). */
  kinds: readonly SessionKind[]
  /** The time `expired` is judged at. */
  now: Date
}

type Table = typeof issuanceSessions | typeof presentationSessions

/**
 * The stored status a requested one stands for: `expired` is an open session past its expiry, and
 * an open status counts only while the session has not expired. Undefined: no session of this kind
 * can have it.
 */
function statusCondition(
  table: Table,
  open: string,
  stored: readonly string[],
  status: SessionStatus,
  now: Date,
) {
  if (status === 'expired') return and(eq(table.status, open), lte(table.expiresAt, now))
  if (!stored.includes(status)) return undefined
  if (status === open) return and(eq(table.status, open), gt(table.expiresAt, now))
  return eq(table.status, status)
}

/**
 * Sessions of one tenant across both tables, newest first. Each table answers its first `limit + 1`
 * rows after the cursor; the merge of the two holds the page, so paging stays stable however the
 * kinds interleave (the cursor is the creation time, to the microsecond, and the id).
 */
export function createSessionRepository(db: Database, tenantId: string) {
  function common(table: Table, filter: SessionListFilter, after: ListKey | undefined): SQL[] {
    return [
      eq(table.tenantId, tenantId),
      ...(filter.createdAfter ? [gte(table.createdAt, new Date(filter.createdAfter))] : []),
      ...(filter.createdBefore ? [lt(table.createdAt, new Date(filter.createdBefore))] : []),
      ...(after ? [afterKey(table.createdAt, table.id, after)] : []),
    ]
  }

  /** What differs between the two kinds in a list: table, open status, stored statuses, config. */
  const KINDS = {
    issuance: {
      table: issuanceSessions,
      open: 'offered',
      stored: ISSUANCE_SESSION_STATUSES,
      config: (id: string) => arrayContains(issuanceSessions.credentialConfigurationIds, [id]),
    },
    presentation: {
      table: presentationSessions,
      open: 'pending',
      stored: PRESENTATION_SESSION_STATUSES,
      config: (id: string) => eq(presentationSessions.presentationConfigId, id),
    },
  } as const

  async function listKind(kind: SessionKind, filter: SessionListFilter, after: ListKey | undefined) {
    const { table: t, open, stored, config } = KINDS[kind]
    const status = filter.status ? statusCondition(t, open, stored, filter.status, filter.now) : undefined
    if (filter.status && !status) return []
    const rows = await db
      .select({ row: t, at: keyCursorText(t.createdAt) })
      .from(t)
      .where(and(...common(t, filter, after), status, filter.configId ? config(filter.configId) : undefined))
      .orderBy(desc(t.createdAt), desc(sql`${t.id} collate "C"`))
      .limit(filter.limit + 1)
    return rows.map(({ row, at }) => ({ item: { kind, row } as SessionRow, key: { at, id: row.id } }))
  }

  const deleteDeliveries = (tx: Executor, sessionId: string) =>
    tx
      .delete(webhookDeliveries)
      .where(and(eq(webhookDeliveries.tenantId, tenantId), eq(webhookDeliveries.sessionId, sessionId)))

  return {
    async list(filter: SessionListFilter): Promise<Page<SessionRow>> {
      const after = decodeKeyCursor(filter.cursor)
      const merged = (await Promise.all(filter.kinds.map((kind) => listKind(kind, filter, after)))).flat()
      merged.sort((a, b) => compareKeys(a.key, b.key))
      return toKeyPage(merged.slice(0, filter.limit + 1), filter.limit)
    },

    /** Deletes an issuance session and its notifications; false when the tenant has no such session. */
    async deleteIssuance(id: string, tx: Executor = db): Promise<boolean> {
      const deleted = await tx
        .delete(issuanceSessions)
        .where(and(eq(issuanceSessions.tenantId, tenantId), eq(issuanceSessions.id, id)))
        .returning({ id: issuanceSessions.id })
      await tx
        .delete(issuanceNotifications)
        .where(and(eq(issuanceNotifications.tenantId, tenantId), eq(issuanceNotifications.sessionId, id)))
      await deleteDeliveries(tx, id)
      return deleted.length > 0
    },

    /** Deletes a presentation session with its result; false when the tenant has no such session. */
    async deletePresentation(id: string, tx: Executor = db): Promise<boolean> {
      const deleted = await tx
        .delete(presentationSessions)
        .where(and(eq(presentationSessions.tenantId, tenantId), eq(presentationSessions.id, id)))
        .returning({ id: presentationSessions.id })
      // The outbox copy of the result holds the same claims.
      await deleteDeliveries(tx, id)
      return deleted.length > 0
    },
  }
}
export type SessionRepository = ReturnType<typeof createSessionRepository>

/**
 * Retention: deletes up to `limit` sessions of each kind, of any tenant, whose expiry lies before
 * `before` (with an issuance session, its notifications). Every session has ended by its expiry:
 * offers and requests live at most a day, and access tokens minutes past it. Returns how many
 * sessions of each kind went.
 */
export async function purgeSessions(
  db: Database,
  before: Date,
  limit = 500,
): Promise<{ issuance: number; presentation: number }> {
  return db.transaction(async (tx) => {
    const issuance = await deleteExpiredBatch(tx, issuanceSessions, issuanceSessions.id, before, limit)
    if (issuance.length > 0) {
      const gone = sql.join(
        issuance.map((row) => sql`(${row.tenantId}, ${row.key})`),
        sql`, `,
      )
      await tx
        .delete(issuanceNotifications)
        .where(sql`(${issuanceNotifications.tenantId}, ${issuanceNotifications.sessionId}) in (${gone})`)
    }
    const presentation = await deleteExpiredBatch(
      tx,
      presentationSessions,
      presentationSessions.id,
      before,
      limit,
    )
    return { issuance: issuance.length, presentation: presentation.length }
  })
}

/**
 * How long after its expiry a redeemed offer may still issue: the issuer's access tokens live
 * 5 minutes (ACCESS_TOKEN_SECONDS in core-domain), and a token can be obtained until the expiry.
 */
const TOKEN_GRACE_MS = 60 * 60 * 1000
/** How long after its session's expiry a same-device result can still be released. */
const RELEASE_GRACE_MS = 60 * 60 * 1000

/**
 * Data minimisation: drops the claims and the encrypted offer code of up to `limit` issuance
 * sessions, of any tenant, that can no longer issue anything: an offer nobody redeemed before its
 * expiry, or a redeemed one whose access tokens have expired too. Returns how many were cleared.
 */
export async function dropUnusableOfferClaims(db: Database, now: Date, limit = 500): Promise<number> {
  const t = issuanceSessions
  const unusable = db
    .select({ tenantId: t.tenantId, id: t.id })
    .from(t)
    .where(
      and(
        or(
          and(eq(t.status, 'offered'), lte(t.expiresAt, now)),
          and(
            inArray(t.status, ['token_issued', 'credential_issued']),
            lt(t.expiresAt, new Date(now.getTime() - TOKEN_GRACE_MS)),
          ),
        ),
        or(isNotNull(t.claimsEncrypted), isNotNull(t.legacyClaims), isNotNull(t.offerCodeEncrypted)),
      ),
    )
    .limit(limit)
  const cleared = await db
    .update(t)
    .set({ claimsEncrypted: null, legacyClaims: null, offerCodeEncrypted: null })
    .where(sql`(${t.tenantId}, ${t.id}) in ${unusable}`)
    .returning({ id: t.id })
  return cleared.length
}

/**
 * `createdByClientId` of the presentation sessions an issuer's presentation login creates (then
 * the login provider's id): no client id has a '/'. Their results belong to the login alone: the
 * issuer takes them out when it issues the code, and the retention job drops those of logins
 * nobody finished, like unreleased same-device results.
 */
export const PRESENTATION_LOGIN_CREATOR = 'issuer/login/'

/**
 * Data minimisation for same-device presentations (OpenID4VP §14.3): their result is released only
 * to the holder of the response code, who redeems it right after the wallet's redirect. Drops the
 * unreleased results of up to `limit` such sessions (and of presentation logins, both kinds), of any tenant, expired more than an hour ago;
 * nothing else could ever read them. Returns how many were dropped.
 */
export async function dropUnreleasedResults(db: Database, now: Date, limit = 500): Promise<number> {
  const t = presentationSessions
  const unreleased = db
    .select({ tenantId: t.tenantId, id: t.id })
    .from(t)
    .where(
      and(
        or(isNotNull(t.responseCodeHash), like(t.createdByClientId, `${PRESENTATION_LOGIN_CREATOR}%`)),
        or(isNotNull(t.resultEncrypted), isNotNull(t.legacyResult)),
        lt(t.expiresAt, new Date(now.getTime() - RELEASE_GRACE_MS)),
      ),
    )
    .limit(limit)
  const dropped = await db
    .update(t)
    .set({ resultEncrypted: null, legacyResult: null })
    .where(sql`(${t.tenantId}, ${t.id}) in ${unreleased}`)
    .returning({ id: t.id })
  return dropped.length
}
