import {
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  type IssuanceSession,
  NotFoundError,
  type Page,
  type PresentationSession,
  type Principal,
  type Role,
  SESSION_KINDS,
  SESSION_STATS_MAX_DAYS,
  type Session,
  type SessionKind,
  type SessionListQuery,
  type SessionStats,
  type SessionStatsQuery,
} from '@credential-service/core-domain'
import { codeHash, type SessionDataCipher } from '@credential-service/crypto'
import {
  createIssuanceSessionRepository,
  createNotificationRepository,
  createPresentationSessionRepository,
  createSessionRepository,
  createSessionStatsRepository,
  type Database,
  recordAudit,
} from '@credential-service/db-schema'
import { presentationResult } from '@credential-service/server-kit'
import { toIssuanceSession } from './offer-service'
import { toPresentationSession } from './presentation-request-service'
import { rememberedSessionKind, rememberSessionKind } from './session-kinds'

export interface SessionServiceDeps {
  db: Database
  /** Decrypts presentation results for single-session reads. */
  sessionData: SessionDataCipher
  now: () => Date
}

const DAY_MS = 24 * 60 * 60 * 1000

/** The role that reads and deletes sessions of each kind. */
const KIND_ROLE: Record<SessionKind, Role> = {
  issuance: 'issuance:offer',
  presentation: 'presentation:request',
}

/**
 * Issuance and presentation sessions of one tenant as one collection. A client sees the kinds its
 * roles cover: `issuance:offer` issuance sessions, `presentation:request` presentation sessions.
 */
export function createSessionService(deps: SessionServiceDeps, tenantId: string, actor: Principal) {
  const sessions = createSessionRepository(deps.db, tenantId)
  const issuance = createIssuanceSessionRepository(deps.db, tenantId)
  const presentation = createPresentationSessionRepository(deps.db, tenantId)
  const may = (kind: SessionKind) => actor.roles.includes(KIND_ROLE[kind])
  const requireKind = (kind: SessionKind) => {
    if (!may(kind)) throw new ForbiddenError(`${kind} sessions need the role ${KIND_ROLE[kind]}`)
  }

  /** Session ids are unique across kinds (`ses_…` from one generator): one table has it, or neither. */
  async function find(id: string) {
    const lookups = [
      async () => {
        const row = await issuance.get(id)
        return row && { kind: 'issuance' as const, row }
      },
      async () => {
        const row = await presentation.get(id)
        return row && { kind: 'presentation' as const, row }
      },
    ] as const
    // A kind remembered from creation or an earlier read is looked up first.
    const order = rememberedSessionKind(tenantId, id) === 'presentation' ? [1, 0] : [0, 1]
    for (const index of order) {
      const found = await lookups[index as 0 | 1]()
      if (found) {
        rememberSessionKind(tenantId, id, found.kind)
        return found
      }
    }
    throw new NotFoundError('session', id)
  }

  async function issuanceWithNotifications(row: Parameters<typeof toIssuanceSession>[0]) {
    const notifications = await createNotificationRepository(deps.db, tenantId).ofSession(row.id)
    return {
      ...toIssuanceSession(row, deps.now()),
      notifications: notifications.map((n) => ({
        credentialConfigurationId: n.credentialConfigurationId,
        event: n.event as 'credential_accepted' | 'credential_failure' | 'credential_deleted' | null,
        receivedAt: n.receivedAt?.toISOString() ?? null,
        delivery: {
          status: n.deliveryStatus as 'none' | 'pending' | 'delivered' | 'failed',
          attempts: n.deliveryAttempts,
          error: n.deliveryError,
        },
      })),
    } satisfies IssuanceSession
  }

  return {
    /** Newest first. Lists never carry claims or notifications; read one session for those. */
    async list(query: SessionListQuery): Promise<Page<Session>> {
      if (query.kind) requireKind(query.kind)
      const kinds = query.kind ? [query.kind] : SESSION_KINDS.filter(may)
      const now = deps.now()
      const page = await sessions.list({ ...query, kinds, now })
      return {
        items: page.items.map((entry) =>
          entry.kind === 'issuance'
            ? toIssuanceSession(entry.row, now)
            : toPresentationSession(entry.row, now, null),
        ),
        nextCursor: page.nextCursor,
      }
    },

    /** Counts per configuration of the kinds the roles cover (the console's dashboard, issue 42). */
    async stats(query: SessionStatsQuery): Promise<SessionStats> {
      const now = deps.now()
      const since = query.since ? new Date(query.since) : new Date(now.getTime() - DAY_MS)
      if (since.getTime() < now.getTime() - SESSION_STATS_MAX_DAYS * DAY_MS || since > now)
        throw new InvalidInputError(`since must lie within the last ${SESSION_STATS_MAX_DAYS} days`, [
          { path: 'querystring.since', message: `within the last ${SESSION_STATS_MAX_DAYS} days` },
        ])
      const stats = createSessionStatsRepository(deps.db, tenantId)
      const [issuanceRows, presentationRows] = await Promise.all([
        may('issuance') ? stats.issuance(since, now) : undefined,
        may('presentation') ? stats.presentation(since, now) : undefined,
      ])
      return {
        since: since.toISOString(),
        until: now.toISOString(),
        ...(issuanceRows ? { issuance: issuanceRows } : {}),
        ...(presentationRows ? { presentation: presentationRows } : {}),
      }
    },

    async get(id: string): Promise<Session> {
      const found = await find(id)
      requireKind(found.kind)
      return found.kind === 'issuance'
        ? issuanceWithNotifications(found.row)
        : toPresentationSession(
            found.row,
            deps.now(),
            // A same-device result is shown only once, for its response code: not decrypted here.
            found.row.responseCodeHash === null ? presentationResult(deps.sessionData, found.row) : null,
          )
    },

    /**
     * Removes a session with its claims, result and notifications, whatever its status: an open
     * offer or request stops working at once. Audited (the id only).
     */
    async delete(id: string): Promise<void> {
      const found = await find(id)
      requireKind(found.kind)
      await deps.db.transaction(async (tx) => {
        const deleted =
          found.kind === 'issuance'
            ? await sessions.deleteIssuance(id, tx)
            : await sessions.deletePresentation(id, tx)
        // Deleted meanwhile (a second DELETE, the retention job): as gone as never there.
        if (!deleted) throw new NotFoundError('session', id)
        await recordAudit(tx, {
          tenantId,
          actorClientId: actor.clientId,
          action: 'delete',
          resourceType: 'session',
          resourceId: id,
          detail: { kind: found.kind },
        })
      })
    },

    /**
     * The claims of a same-device presentation (OpenID4VP §8.2, HAIP 5.1), for the response code the
     * wallet's redirect carried: released once, then gone from the session (S-86). A wrong or spent
     * code is 403, as is a result the retention job dropped (unreleased an hour past expiry); a
     * session that was given no response code is 409.
     */
    async releaseResult(id: string, responseCode: string): Promise<PresentationSession> {
      requireKind('presentation')
      const row = await presentation.get(id)
      if (!row) throw new NotFoundError('session', id)
      if (row.responseCodeHash === null) {
        throw new ConflictError(
          'this session has no response code (no same-device redirect); read it with GET /api/sessions/{id}',
        )
      }
      const released = await presentation.releaseResult(id, codeHash(responseCode))
      if (!released)
        throw new ForbiddenError(
          'the response code does not match, or the result was released or dropped already',
        )
      return {
        ...toPresentationSession(released, deps.now(), null),
        claims: presentationResult(deps.sessionData, released),
      }
    },
  }
}
