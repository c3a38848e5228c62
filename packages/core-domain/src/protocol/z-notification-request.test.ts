import { describe, expect, it } from 'vitest'
import { ProtocolError } from '../errors'
import { parseNotificationRequest } from './z-notification-request'

const refusal = (body: unknown) => {
  try {
    parseNotificationRequest(body)
  } catch (error) {
    if (error instanceof ProtocolError) return { error: error.error, description: error.message }
    throw error
  }
  return undefined
}

describe('the notification request (OpenID4VCI 1.0 §11.1, §11.3)', () => {
  it('I-74: parses notification_id, event and event_description; other parameters are ignored', () => {
    expect(
      parseNotificationRequest({
        notification_id: 'ntf_1',
        event: 'credential_failure',
        event_description: 'storage full',
        extension: true,
      }),
    ).toStrictEqual({
      notification_id: 'ntf_1',
      event: 'credential_failure',
      event_description: 'storage full',
    })
  })

  it('I-74 / §11.3: no notification_id, or one that is no string, is invalid_notification_request naming it', () => {
    for (const body of [
      { event: 'credential_accepted' },
      { notification_id: 7, event: 'credential_accepted' },
      [],
      'x',
      null,
    ])
      expect(refusal(body)).toStrictEqual({
        error: 'invalid_notification_request',
        description: 'notification_id is required',
      })
  })

  it('I-74 / §11.3: an event outside §11.1 is invalid_notification_request listing the events', () => {
    expect(refusal({ notification_id: 'ntf_1', event: 'credential_lost' })).toStrictEqual({
      error: 'invalid_notification_request',
      description: 'event must be one of credential_accepted, credential_failure, credential_deleted',
    })
  })

  it('an event_description that is no string is dropped, not refused (it is informative only)', () => {
    const parsed = parseNotificationRequest({
      notification_id: 'ntf_1',
      event: 'credential_deleted',
      event_description: 3,
    })
    expect(parsed).toMatchObject({ notification_id: 'ntf_1', event: 'credential_deleted' })
    expect(parsed.event_description).toBeUndefined()
  })
})
