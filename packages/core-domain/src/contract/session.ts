import { z } from 'zod'
import { zPageQuery, zTimestamp } from './common'
import { zConfigId } from './credential-config'
import { zIssuanceSession } from './issuance'
import { zPresentationSession } from './presentation-config'

export const SESSION_KINDS = ['issuance', 'presentation'] as const
export const zSessionKind = z
  .enum(SESSION_KINDS)
  .describe('Issuance (OpenID4VCI) or presentation (OpenID4VP)')
export type SessionKind = z.infer<typeof zSessionKind>

/**
 * One status vocabulary for both kinds. `expired` is never stored: an open session (`offered`,
 * `pending`) past its `expiresAt` reads as expired.
 */
export const SESSION_STATUSES = [
  'offered',
  'token_issued',
  'credential_issued',
  'completed',
  'pending',
  'verified',
  'failed',
  'expired',
] as const
export const zSessionStatus = z
  .enum(SESSION_STATUSES)
  .describe(
    [
      'Session status. Issuance: `offered` → `token_issued` → `credential_issued` (some configurations issued) → `completed` (all issued).',
      'Presentation: `pending` → `verified`.',
      'Both kinds: `failed` (see `failureReason`), `expired` (an open session past `expiresAt`).',
      'Ended: `completed`, `verified`, `failed`, `expired`.',
    ].join(' '),
  )
export type SessionStatus = z.infer<typeof zSessionStatus>

export const zSessionListQuery = zPageQuery
  .extend({
    kind: zSessionKind
      .optional()
      .describe('Only sessions of this kind; both kinds the caller’s roles allow when absent'),
    status: zSessionStatus.optional(),
    configId: zConfigId
      .optional()
      .describe(
        'Sessions of this credential configuration (one of an offer’s) or presentation configuration',
      ),
    createdAfter: zTimestamp.optional().describe('Created at or after this time'),
    createdBefore: zTimestamp.optional().describe('Created before this time'),
  })
  .strict()
export type SessionListQuery = z.infer<typeof zSessionListQuery>

/** A session of either kind, as lists answer it (no notifications, no claims). */
export const zSession = z
  .discriminatedUnion('kind', [zIssuanceSession, zPresentationSession])
  .meta({ id: 'Session' })
export type Session = z.infer<typeof zSession>

/** `GET /api/sessions/{id}/events`: Server-Sent Events whose `data` is a session (docs/management-api.md). */
export const zSessionEventStream = z.string().meta({
  id: 'SessionEventStream',
  description:
    'text/event-stream: `event: session` events (`id: <updated ms>.<status>`, `data`: the session as JSON), `event: deleted` (`data: {"id":…}`), `event: token-expired` (`data: {"expiredAt":…}`, the access token expired: the stream ends), `: keep-alive` comments',
})

export const zSessionResultRequest = z
  .object({
    responseCode: z
      .string()
      .min(1)
      .max(200)
      .describe('The `response_code` the wallet’s redirect carried to the initiating browser session'),
  })
  .strict()
  .meta({ id: 'SessionResultRequest' })
export type SessionResultRequest = z.infer<typeof zSessionResultRequest>

/** The longest window `GET …/session-stats` counts over: the created-at index keeps it cheap. */
export const SESSION_STATS_MAX_DAYS = 31

export const zSessionStatsQuery = z
  .object({
    since: zTimestamp
      .optional()
      .describe(
        `Count sessions created at or after this time; 24 hours ago when absent, at most ${SESSION_STATS_MAX_DAYS} days ago`,
      ),
  })
  .strict()
export type SessionStatsQuery = z.infer<typeof zSessionStatsQuery>

const count = (what: string) => z.number().int().min(0).describe(what)

export const zSessionStats = z
  .object({
    since: zTimestamp.describe('Sessions created at or after this time are counted'),
    until: zTimestamp.describe('The time of the count'),
    issuance: z
      .array(
        z.object({
          credentialConfigurationId: zConfigId,
          offered: count('Offers naming the configuration'),
          issued: count('Of them, offers the configuration was issued with'),
          failed: count('Of them, failed sessions'),
          expired: count('Of them, offers that expired unused'),
        }),
      )
      .optional()
      .describe('Per credential configuration; absent without the role `issuance:offer`'),
    presentation: z
      .array(
        z.object({
          presentationConfigId: zConfigId,
          requested: count('Presentation requests of the configuration'),
          verified: count('Of them, verified presentations'),
          failed: count('Of them, failed sessions'),
          expired: count('Of them, requests that expired unanswered'),
        }),
      )
      .optional()
      .describe('Per presentation configuration; absent without the role `presentation:request`'),
  })
  .meta({ id: 'SessionStats' })
export type SessionStats = z.infer<typeof zSessionStats>
