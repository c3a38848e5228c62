import type { AuditEvent, IssuanceSession } from '@credential-service/sdk'
import { describe, expect, it } from 'vitest'
import { sessionTimeline } from '../src/flows/session-timeline'

const session = {
  kind: 'issuance',
  id: 'ses_1',
  status: 'completed',
  credentialConfigurationIds: ['pid'],
  issuedConfigurationIds: ['pid'],
  createdByClientId: 'acme-offers',
  createdAt: '2026-12-07T10:00:00.000Z',
  offerFetchedAt: '2026-12-07T10:00:05.000Z',
  tokenIssuedAt: '2026-12-07T10:00:06.000Z',
  credentialIssuedAt: '2026-12-07T10:00:07.000Z',
  updatedAt: '2026-12-07T10:00:07.000Z',
  expiresAt: '2026-12-07T10:10:00.000Z',
  failureReason: null,
  notifications: [
    {
      credentialConfigurationId: 'pid',
      event: 'credential_accepted',
      receivedAt: '2026-12-07T10:00:09.000Z',
      delivery: { status: 'delivered', attempts: 1, error: null },
    },
  ],
} as unknown as IssuanceSession

const revoked: AuditEvent = {
  id: 'aud_1',
  tenantId: 'acme',
  actorClientId: 'acme-admin',
  action: 'update',
  resourceType: 'credential-status',
  resourceId: 'ses_1',
  fields: ['status'],
  at: '2026-12-07T10:00:08.000Z',
}

describe('the session timeline (issue 42 item 3)', () => {
  it('merges the record, the statuses the event stream brought and the audit log, in time order', () => {
    const observed = [
      { status: 'offered' as const, at: session.createdAt },
      // Seen live, at a time the record tells nothing of.
      { status: 'token_issued' as const, at: '2026-12-07T10:00:06.500Z' },
      { status: 'completed' as const, at: session.updatedAt },
    ]
    expect(sessionTimeline(session, observed, [revoked])).toStrictEqual([
      { at: session.createdAt, what: 'Offer created by acme-offers', source: 'session' },
      { at: '2026-12-07T10:00:05.000Z', what: 'Offer fetched by the wallet', source: 'session' },
      { at: '2026-12-07T10:00:06.000Z', what: 'Access token issued', source: 'session' },
      { at: '2026-12-07T10:00:06.500Z', what: 'Status token_issued', source: 'event stream' },
      { at: '2026-12-07T10:00:07.000Z', what: 'Credential issued (pid)', source: 'session' },
      { at: '2026-12-07T10:00:07.000Z', what: 'Completed: every configuration issued', source: 'session' },
      {
        at: '2026-12-07T10:00:08.000Z',
        what: 'update credential-status by acme-admin (status)',
        source: 'audit log',
      },
      {
        at: '2026-12-07T10:00:09.000Z',
        what: 'Wallet notification credential_accepted for pid',
        source: 'session',
      },
    ])
  })

  it('an expired offer ends with its expiry; a failed one says why', () => {
    const expired = { ...session, status: 'expired', credentialIssuedAt: null, notifications: [] }
    expect(sessionTimeline(expired as IssuanceSession, [], []).at(-1)).toStrictEqual({
      at: session.expiresAt,
      what: 'Expired unused',
      source: 'session',
    })
    const failed = { ...expired, status: 'failed', failureReason: 'invalid_proof' }
    expect(sessionTimeline(failed as IssuanceSession, [], []).at(-1)?.what).toBe('Failed: invalid_proof')
  })
})
