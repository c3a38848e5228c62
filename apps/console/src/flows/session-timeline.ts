import type { AuditEvent, Session } from '@credential-service/sdk'

/** One line of a session's timeline. */
export interface TimelineEvent {
  at: string
  what: string
  /** Where it is known from: the session's record, its event stream as watched, or the audit log. */
  source: 'session' | 'event stream' | 'audit log'
}

/** A status the page saw arrive on the session's event stream, with the session's `updatedAt`. */
export interface ObservedStatus {
  status: Session['status']
  at: string
}

const FINAL_WORDS: Partial<Record<Session['status'], string>> = {
  completed: 'Completed: every configuration issued',
  verified: 'Presentation verified',
  failed: 'Failed',
}

/** What the session's own record tells: its timestamps, final status and wallet notifications. */
function recordEvents(session: Session): TimelineEvent[] {
  const events: TimelineEvent[] = []
  const add = (at: string | null | undefined, what: string) => {
    if (at) events.push({ at, what, source: 'session' })
  }
  if (session.kind === 'issuance') {
    add(session.createdAt, `Offer created by ${session.createdByClientId}`)
    add(session.offerFetchedAt, 'Offer fetched by the wallet')
    add(session.tokenIssuedAt, 'Access token issued')
    add(session.credentialIssuedAt, `Credential issued (${session.issuedConfigurationIds.join(', ')})`)
    for (const notification of session.notifications ?? [])
      add(
        notification.receivedAt,
        `Wallet notification ${notification.event ?? ''} for ${notification.credentialConfigurationId}`,
      )
  } else {
    add(session.createdAt, `Presentation request created by ${session.createdByClientId}`)
    add(session.requestFetchedAt, 'Request fetched by the wallet')
    add(session.responseReceivedAt, 'Response received')
  }
  const final = FINAL_WORDS[session.status]
  if (final) add(session.updatedAt, session.failureReason ? `${final}: ${session.failureReason}` : final)
  if (session.status === 'expired') add(session.expiresAt, 'Expired unused')
  return events
}

const auditWhat = (event: AuditEvent) =>
  `${event.action} ${event.resourceType} by ${event.actorClientId}${event.fields.length ? ` (${event.fields.join(', ')})` : ''}`

/**
 * Every event of a session in time order (issue 42 item 3): its record, the statuses watched on
 * its event stream (a status the record already tells at that time is told once) and its audit
 * events (deletion, credential status changes).
 */
export function sessionTimeline(
  session: Session,
  observed: readonly ObservedStatus[],
  audit: readonly AuditEvent[],
): TimelineEvent[] {
  const record = recordEvents(session)
  const told = new Set(record.map((event) => event.at))
  const watched = observed
    .filter((entry) => !told.has(entry.at))
    .map((entry): TimelineEvent => ({ at: entry.at, what: `Status ${entry.status}`, source: 'event stream' }))
  const audited = audit.map(
    (event): TimelineEvent => ({ at: event.at, what: auditWhat(event), source: 'audit log' }),
  )
  return [...record, ...watched, ...audited]
    .map((event, index) => ({ event, index }))
    .sort((a, b) => Date.parse(a.event.at) - Date.parse(b.event.at) || a.index - b.index)
    .map(({ event }) => event)
}
