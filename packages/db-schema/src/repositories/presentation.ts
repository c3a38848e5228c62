import { and, eq, gt, isNotNull, isNull, or, type SQL, sql } from 'drizzle-orm'
import type { Database, Executor } from '../database'
import { type PresentationSessionRow, presentationSessions } from '../schema'
import { insertValues, param, prepared, preparedInsert } from './prepared'

const INSERT_COLUMNS = [
  'tenantId',
  'id',
  'requestId',
  'status',
  'presentationConfigId',
  'clientId',
  'nonce',
  'state',
  'responseMode',
  'redirectUri',
  'origin',
  'dcApiProtocols',
  'transactionData',
  'webhookEndpointId',
  'encryptionKey',
  'encryptionKid',
  'createdByClientId',
  'expiresAt',
]
const tenant = eq(presentationSessions.tenantId, param('tenantId'))
const at = param('at')

// The statements of every presentation flow, prepared once per database.
const statements = {
  get: (db: Database) =>
    prepared(db, 'presentation_get', (d) =>
      d
        .select()
        .from(presentationSessions)
        .where(and(tenant, eq(presentationSessions.id, param('id')))),
    ),
  byRequestId: (db: Database) =>
    prepared(db, 'presentation_by_request', (d) =>
      d
        .select()
        .from(presentationSessions)
        .where(and(tenant, eq(presentationSessions.requestId, param('requestId')))),
    ),
  fetchRequest: (db: Database) =>
    prepared(db, 'presentation_fetch_request', (d) =>
      d
        .update(presentationSessions)
        .set({ requestFetchedAt: at, updatedAt: sql`now()` })
        .where(
          and(
            tenant,
            eq(presentationSessions.requestId, param('requestId')),
            eq(presentationSessions.status, 'pending'),
            gt(presentationSessions.expiresAt, at),
          ),
        )
        .returning(),
    ),
  finish: (db: Database) => prepared(db, 'presentation_finish', finishStatement),
}

function finishStatement(d: Database) {
  return d
    .update(presentationSessions)
    .set({
      status: param('status'),
      resultEncrypted: param('resultEncrypted'),
      failureReason: param('failureReason'),
      responseCodeHash: param('responseCodeHash'),
      responseReceivedAt: at,
      updatedAt: sql`now()`,
    })
    .where(and(tenant, eq(presentationSessions.id, param('id')), eq(presentationSessions.status, 'pending')))
    .returning()
}

export type NewPresentationSession = Omit<typeof presentationSessions.$inferInsert, 'tenantId'>

/** Presentation sessions of one tenant. The response is accepted once: a conditional update wins. */
export function createPresentationSessionRepository(db: Database, tenantId: string) {
  const inTenant = eq(presentationSessions.tenantId, tenantId)
  /** The row matching `condition`, its result taken out of it in the same transaction (once). */
  const takeOnce = (id: string, condition: SQL) =>
    db.transaction(async (tx) => {
      const [row] = await tx
        .select()
        .from(presentationSessions)
        .where(and(inTenant, eq(presentationSessions.id, id), condition))
        .for('update')
      if (!row) return undefined
      await tx
        .update(presentationSessions)
        .set({ resultEncrypted: null, legacyResult: null, updatedAt: new Date() })
        .where(and(inTenant, eq(presentationSessions.id, id)))
      return row
    })

  return {
    async insert(row: NewPresentationSession): Promise<PresentationSessionRow> {
      const values = insertValues(presentationSessions, INSERT_COLUMNS, { ...row, tenantId })
      const [inserted] = await preparedInsert(
        db,
        'presentation_insert',
        presentationSessions,
        INSERT_COLUMNS,
      ).execute(values)
      return inserted as PresentationSessionRow
    },

    async get(id: string): Promise<PresentationSessionRow | undefined> {
      const [row] = await statements.get(db).execute({ tenantId, id })
      return row
    },

    /** The open request behind a request or response URI; marks the request fetched. */
    async fetchRequest(requestId: string, at: Date): Promise<PresentationSessionRow | undefined> {
      const [row] = await statements.fetchRequest(db).execute({ tenantId, requestId, at: at.toISOString() })
      return row
    },

    async byRequestId(requestId: string): Promise<PresentationSessionRow | undefined> {
      const [row] = await statements.byRequestId(db).execute({ tenantId, requestId })
      return row
    },

    /**
     * Ends a pending session with its outcome; undefined when another response came first. In a
     * transaction (`tx`, to store the webhook event with it) the statement is built unprepared.
     */
    async finish(
      id: string,
      outcome: {
        status: 'verified' | 'failed'
        /** The disclosed claims, encrypted by the caller (SessionDataCipher.sealResult). */
        resultEncrypted?: string | null
        failureReason?: string | null
        responseCodeHash?: string | null
      },
      at: Date,
      tx?: Executor,
    ): Promise<PresentationSessionRow | undefined> {
      const statement = tx
        ? finishStatement(tx as Database).prepare('presentation_finish_tx')
        : statements.finish(db)
      const [row] = await statement.execute({
        tenantId,
        id,
        at: at.toISOString(),
        status: outcome.status,
        resultEncrypted: outcome.resultEncrypted ?? null,
        failureReason: outcome.failureReason ?? null,
        responseCodeHash: outcome.responseCodeHash ?? null,
      })
      return row
    },

    /**
     * Releases the result of a same-device session to the holder of its response code (OpenID4VP
     * §8.2, §14.3), once: the claims leave the session in the same transaction, so a second caller,
     * with the same code or another, gets nothing. Undefined when the code does not match or the
     * result was released (or dropped) already.
     */
    async releaseResult(id: string, responseCodeHash: string): Promise<PresentationSessionRow | undefined> {
      return takeOnce(
        id,
        and(
          eq(presentationSessions.responseCodeHash, responseCodeHash),
          or(isNotNull(presentationSessions.resultEncrypted), isNotNull(presentationSessions.legacyResult)),
        ) as SQL,
      )
    },

    /**
     * Takes the result of a verified session without a response code (cross-device) out of it, once,
     * for the one caller it was made for (the issuer's presentation login): the claims leave the
     * session in the same transaction, so a second caller gets nothing.
     */
    async takeResult(id: string): Promise<PresentationSessionRow | undefined> {
      return takeOnce(
        id,
        and(
          eq(presentationSessions.status, 'verified'),
          isNull(presentationSessions.responseCodeHash),
          isNotNull(presentationSessions.resultEncrypted),
        ) as SQL,
      )
    },
  }
}
export type PresentationSessionRepository = ReturnType<typeof createPresentationSessionRepository>
