import { z } from 'zod'
import { ProtocolError } from '../errors'
import { asObject } from './parse-issue'

/** The events a wallet may notify (OpenID4VCI 1.0 §11.1). */
export const NOTIFICATION_EVENTS = [
  'credential_accepted',
  'credential_failure',
  'credential_deleted',
] as const

/**
 * A notification request (OpenID4VCI 1.0 §11.1). `event_description` is informative: a value that
 * is not a string is dropped, as before the schema, rather than refusing the notification.
 */
export const zNotificationRequest = z.object({
  notification_id: z.string({ error: 'notification_id is required' }),
  event: z.enum(NOTIFICATION_EVENTS, { error: `event must be one of ${NOTIFICATION_EVENTS.join(', ')}` }),
  event_description: z.string().optional().catch(undefined),
})
export type NotificationRequest = z.infer<typeof zNotificationRequest>

/** The request, or `invalid_notification_request` (§11.3) naming the first problem. */
export function parseNotificationRequest(body: unknown): NotificationRequest {
  // A body that is no JSON object has no notification_id either.
  const parsed = zNotificationRequest.safeParse(asObject(body))
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]
  throw new ProtocolError('invalid_notification_request', issue?.message ?? 'malformed notification request')
}
