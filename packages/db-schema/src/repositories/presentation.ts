import { and, eq, getTableColumns, gt, isNotNull, isNull, or, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../database'
import { type PresentationSessionRow, presentationSessions } from '../schema'
import { insertValues, param, prepared, preparedInsert } from './prepared'
import { rowsOf } from './rows'
import { deliveriesInsert, type NewWebhookDelivery } from './webhook-deliveries'

/** The columns a new session is stored with (also by authorization.ts, with its request). */
export const PRESENTATION_INSERT_COLUMNS = [
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
  // The request fetch, and on the first fetch of a session with a webhook endpoint its
  // `presentation.status` `request_retrieved` event (built here: the session is not known before),
  // in one statement.
  fetchRequest: (db: Database) =>
    prepared(db, 'presentation_fetch_request', (d) => {
      const step = d.$with('step', { id: sql<string>`id` }).as(sql`
        insert into webhook_deliveries (tenant_id, id, endpoint_id, event_type, session_id,
          drop_session_result, payload_clear, status, attempts, next_attempt_at, created_at, updated_at,
          traceparent, dedupe_key)
        select s.tenant_id, ${param('deliveryId')}::text, e.id, 'presentation.status', s.id, false,
          '{"type":"presentation.status","tenantId":' || to_json(s.tenant_id)::text
            || ',"sessionId":' || to_json(s.id)::text
            || ',"presentationConfigId":' || to_json(s.presentation_config_id)::text
            || ',"status":"request_retrieved","at":' || to_json(${at}::text)::text
            || ',"deliveryId":' || to_json(${param('deliveryId')}::text)::text || '}',
          'pending', 0, ${at}::timestamptz, now(), now(), ${param('traceparent')}::text,
          'presentation.status:' || s.id || ':request_retrieved'
        from presentation_sessions s
        join webhook_endpoints e on e.tenant_id = s.tenant_id and e.id = s.webhook_endpoint_id
        where s.tenant_id = ${param('tenantId')} and s.request_id = ${param('requestId')}
          and s.status = 'pending' and s.expires_at > ${at}::timestamptz and s.request_fetched_at is null
          and (e.events is null or 'presentation.status' = any(e.events))
        on conflict (tenant_id, endpoint_id, dedupe_key) do nothing
        returning id`)
      return d
        .with(step)
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
        .returning({
          ...getTableColumns(presentationSessions),
          stepStored: sql<boolean>`exists (select 1 from ${step})`,
        })
    }),
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

/** How a response ends a pending session. */
export interface PresentationOutcome {
  status: 'verified' | 'failed'
  /** The disclosed claims, encrypted by the caller (SessionDataCipher.sealResult). */
  resultEncrypted?: string | null
  failureReason?: string | null
  responseCodeHash?: string | null
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
      const values = insertValues(presentationSessions, PRESENTATION_INSERT_COLUMNS, { ...row, tenantId })
      const [inserted] = await preparedInsert(
        db,
        'presentation_insert',
        presentationSessions,
        PRESENTATION_INSERT_COLUMNS,
      ).execute(values)
      return inserted as PresentationSessionRow
    },

    async get(id: string): Promise<PresentationSessionRow | undefined> {
      const [row] = await statements.get(db).execute({ tenantId, id })
      return row
    },

    /**
     * The open request behind a request URI; marks the request fetched. The first fetch of a
     * session with a webhook endpoint also stores its `request_retrieved` event as `step`
     * (`stepStored`: kick it).
     */
    async fetchRequest(
      requestId: string,
      at: Date,
      step: { deliveryId: string; traceparent?: string | undefined },
    ): Promise<(PresentationSessionRow & { stepStored: boolean }) | undefined> {
      const [row] = await statements.fetchRequest(db).execute({
        tenantId,
        requestId,
        at: at.toISOString(),
        deliveryId: step.deliveryId,
        traceparent: step.traceparent ?? null,
      })
      return row
    },

    async byRequestId(requestId: string): Promise<PresentationSessionRow | undefined> {
      const [row] = await statements.byRequestId(db).execute({ tenantId, requestId })
      return row
    },

    /**
     * Ends a pending session with its outcome; undefined when another response came first. A
     * session with a webhook endpoint ends with `finishWithEvents`.
     */
    async finish(
      id: string,
      outcome: PresentationOutcome,
      at: Date,
    ): Promise<PresentationSessionRow | undefined> {
      const [row] = await statements.finish(db).execute({
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
     * Ends a pending session with its outcome and stores its webhook `deliveries` (sealed for this
     * session) in the same statement, only when it ended it: no transaction, no statement more
     * than `finish`. `finished` false when another response came first (nothing stored then).
     */
    async finishWithEvents(
      id: string,
      outcome: PresentationOutcome,
      at: Date,
      deliveries: NewWebhookDelivery[],
    ): Promise<{ finished: boolean; queued: string[] }> {
      const p = presentationSessions
      const result = await db.execute(sql`
        with finished as (
          update ${p} set status = ${outcome.status}, result_encrypted = ${outcome.resultEncrypted ?? null},
            failure_reason = ${outcome.failureReason ?? null},
            response_code_hash = ${outcome.responseCodeHash ?? null},
            response_received_at = ${at.toISOString()}::timestamptz, updated_at = now()
          where ${p.tenantId} = ${tenantId} and ${p.id} = ${id} and ${p.status} = 'pending'
          returning ${p.id}
        ), queued as (${deliveriesInsert(tenantId, deliveries, 'finished')})
        select (select count(*) from finished)::int as finished, array(select id from queued) as queued`)
      const [row] = rowsOf(result) as { finished: number; queued: string[] }[]
      return { finished: Number(row?.finished) > 0, queued: (row?.queued ?? []).map(String) }
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
