import type {
  PresentationResultEventBody,
  PresentationStatusEventBody,
  PresentationStep,
} from '@credential-service/core-domain'
import { newId, ProtocolError } from '@credential-service/core-domain'
import { currentTraceparent } from '@credential-service/core-domain/tracing'
import { codeHash, type PresentationRejected } from '@credential-service/crypto'
import {
  createPresentationSessionRepository,
  type PresentationSessionRow,
} from '@credential-service/db-schema'
import type { PresentationDeps } from './deps'

export type SessionOutcome = Parameters<ReturnType<typeof createPresentationSessionRepository>['finish']>[1]

type SessionFields = 'type' | 'tenantId' | 'sessionId' | 'presentationConfigId'
/** What a `presentation.result` body says about the outcome: its fields after the session's. */
export type ResultFields = PresentationResultEventBody extends infer E
  ? E extends unknown
    ? Omit<E, SessionFields>
    : never
  : never

/**
 * Ends the pending session with its outcome and, in the same statement, stores the webhook events
 * (`presentation.result` with `event`, and the `presentation.status` step) in the outbox when the
 * session has an endpoint subscribed to them.
 * With the tenant's `drop-after-delivery` retention, claims the webhook receives leave the session
 * (and the outbox) once delivered. False when another response ended the session first.
 */
export async function finishSession(
  deps: PresentationDeps,
  row: PresentationSessionRow,
  outcome: SessionOutcome,
  event: ResultFields,
  now: Date,
): Promise<boolean> {
  const ended = await endSession(deps, row, outcome, event, now)
  if (ended) sessionFinished(deps, row, outcome)
  return ended
}

/** The metric and log line of a session ended (by finishSession, or by a caller's own statement). */
export function sessionFinished(
  deps: Pick<PresentationDeps, 'metrics' | 'log'>,
  row: PresentationSessionRow,
  outcome: SessionOutcome,
): void {
  deps.metrics.presentationFinished(row.tenantId, outcome.status)
  deps.log.info?.(
    {
      tenantId: row.tenantId,
      sessionId: row.id,
      presentationConfigId: row.presentationConfigId,
      ...(outcome.failureReason ? { failureReason: outcome.failureReason } : {}),
    },
    outcome.status === 'verified' ? 'presentation verified' : 'presentation failed',
  )
}

async function endSession(
  deps: PresentationDeps,
  row: PresentationSessionRow,
  outcome: SessionOutcome,
  event: ResultFields,
  now: Date,
): Promise<boolean> {
  const sessions = createPresentationSessionRepository(deps.db, row.tenantId)
  const endpointId = row.webhookEndpointId
  if (!endpointId) return (await sessions.finish(row.id, outcome, now)) !== undefined
  // Read before the statement that ends the session (PGlite runs one statement at a time).
  const tenant = await deps.tenants.tenant(row.tenantId)
  // The outbox adds `deliveryId`; the field order is the body's (its bytes are signed as stored).
  const body: PresentationResultEventBody = {
    type: 'presentation.result',
    tenantId: row.tenantId,
    sessionId: row.id,
    presentationConfigId: row.presentationConfigId,
    ...event,
  }
  // Both events are stored by the statement that ends the session, and only if it does: the
  // step event costs the response no statement (before it, a transaction of three held both).
  const { finished, queued } = await sessions.finishWithEvents(row.id, outcome, now, [
    deps.outbox.seal({
      tenantId: row.tenantId,
      endpointId,
      type: body.type,
      sessionId: row.id,
      dropSessionResult: tenant?.presentationRetention === 'drop-after-delivery' && 'claims' in event,
      body,
    }),
    deps.outbox.seal(stepEvent(row, endpointId, outcome.status, now)),
  ])
  if (queued.length) void deps.outbox.kick(queued)
  return finished
}

/** The `presentation.status` event of a step of the session (never claims), once per step. */
function stepEvent(row: PresentationSessionRow, endpointId: string, status: PresentationStep, at: Date) {
  // The outbox adds `deliveryId`; the field order is the body's (its bytes are signed as stored).
  const body: PresentationStatusEventBody = {
    type: 'presentation.status',
    tenantId: row.tenantId,
    sessionId: row.id,
    presentationConfigId: row.presentationConfigId,
    status,
    at: at.toISOString(),
  }
  return {
    tenantId: row.tenantId,
    endpointId,
    type: body.type,
    sessionId: row.id,
    body,
    dedupeKey: `${body.type}:${row.id}:${status}`,
  }
}

/**
 * The open request behind a request URI, marked fetched. Its first fetch also stores the session's
 * `presentation.status` `request_retrieved` in the same statement, which builds that body (the
 * request id names no session beforehand; the body holds no claim and no outcome), then kicks it.
 */
export async function fetchOpenRequest(deps: PresentationDeps, tenantId: string, requestId: string) {
  const deliveryId = newId('whd')
  const row = await createPresentationSessionRepository(deps.db, tenantId).fetchRequest(
    requestId,
    deps.now(),
    {
      deliveryId,
      traceparent: currentTraceparent(),
    },
  )
  if (row?.stepStored) void deps.outbox.kick([deliveryId])
  return row
}

/** The pending session a response answers, or the refusal every response endpoint gives. */
export async function openSession(deps: PresentationDeps, tenantId: string, requestId: string) {
  const row = await createPresentationSessionRepository(deps.db, tenantId).byRequestId(requestId)
  const now = deps.now()
  if (row?.status !== 'pending' || row.expiresAt <= now) {
    throw new ProtocolError(
      'invalid_request',
      'no open request for this response (unknown, expired or already answered)',
    )
  }
  return { row, now }
}

/** How a response ends its session as failed: `fail` records the reason, `refuse` also makes the wallet's error. */
export function sessionEnding(deps: PresentationDeps, row: PresentationSessionRow, now: Date) {
  const fail = async (reason: string) => {
    const outcome = { status: 'failed', failureReason: reason } as const
    await finishSession(deps, row, outcome, outcome, now)
    return reason
  }
  /** Fails the session with the whole reason; the wallet may be told less (and the log has it all). */
  const refuse = async (error: PresentationRejected) => {
    await fail(error.message)
    return new ProtocolError('invalid_request', error.toWallet ?? error.message, { cause: error })
  }
  return { fail, refuse }
}

/**
 * Ends the session verified with its claims (sealed at rest). With `responseCode`, the result is
 * released only to the holder of the code (S-86: never to a webhook); false when another response
 * ended the session first.
 */
export async function finishVerified(
  deps: PresentationDeps,
  row: PresentationSessionRow,
  result: Record<string, Record<string, unknown>[]>,
  now: Date,
  responseCode?: string,
): Promise<boolean> {
  return finishSession(
    deps,
    row,
    {
      status: 'verified',
      resultEncrypted: deps.keys.sessionData.sealResult(row.tenantId, row.id, result),
      responseCodeHash: responseCode ? codeHash(responseCode) : null,
    },
    responseCode
      ? { status: 'verified', responseCodeRequired: true }
      : { status: 'verified', claims: result },
    now,
  )
}
