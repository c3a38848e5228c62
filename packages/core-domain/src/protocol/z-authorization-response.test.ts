import { describe, expect, it } from 'vitest'
import {
  safeParseAuthorizationResponse,
  safeParseEncryptedAuthorizationResponse,
} from './z-authorization-response'

const refusal = (form: Record<string, unknown>) => {
  const parsed = safeParseAuthorizationResponse(form)
  if (parsed.success) throw new Error('parsed')
  return { code: parsed.error.error, detail: parsed.error.detail }
}
const invalid = (detail: string) => ({ code: 'invalid_request', detail })

describe('the authorization response (OpenID4VP 1.0 §8)', () => {
  it('§8.1: vp_token is a JSON object keyed by credential query id, as form text or (decrypted) as the object', () => {
    const vpToken = { my_credential: ['eyJhbGci...QMA', 'eyJhbGci...QMB'] }
    expect(safeParseAuthorizationResponse({ vp_token: JSON.stringify(vpToken), state: 's' })).toStrictEqual({
      success: true,
      data: { vp_token: vpToken, state: 's' },
    })
    expect(safeParseAuthorizationResponse({ vp_token: vpToken })).toStrictEqual({
      success: true,
      data: { vp_token: vpToken },
    })
  })

  it('§8.5: a string error is an error response, whatever else came with it; a non-string description is dropped', () => {
    expect(
      safeParseAuthorizationResponse({ error: 'access_denied', error_description: ['a', 'b'], vp_token: 5 }),
    ).toStrictEqual({
      success: true,
      data: { error: 'access_denied', error_description: undefined, vp_token: 5 },
    })
  })

  it('V-22, §8.1, S-123: a malformed vp_token is invalid_request naming where', () => {
    const keyed = invalid('vp_token must be a JSON object keyed by credential query id')
    for (const vpToken of [undefined, '5', '[]', 'null', ['a', 'b']])
      expect(refusal({ vp_token: vpToken, state: 's' }), String(vpToken)).toStrictEqual(keyed)
    expect(refusal({ vp_token: '{' })).toStrictEqual(invalid('vp_token is not JSON'))
    expect(refusal({ vp_token: `${'{"a":'.repeat(100)}1${'}'.repeat(100)}` })).toStrictEqual(
      invalid('vp_token nests deeper than 64 levels'),
    )
    expect(refusal({ vp_token: '{"pid":[]}' })).toStrictEqual(
      invalid('vp_token.pid must be a non-empty array'),
    )
    expect(refusal({ vp_token: '{"pid":"x"}' })).toStrictEqual(
      invalid('vp_token.pid must be a non-empty array'),
    )
    expect(refusal({ error: 5, vp_token: { pid: ['x', 5] } })).toStrictEqual(
      invalid('vp_token.pid holds a presentation that is not a string'),
    )
  })

  it('§8.3: a direct_post.jwt response is one JWE in `response`', () => {
    expect(safeParseEncryptedAuthorizationResponse({ response: 'eyJ.a.b.c.d' })).toStrictEqual({
      success: true,
      data: { response: 'eyJ.a.b.c.d' },
    })
    const plain = safeParseEncryptedAuthorizationResponse({ vp_token: '{}' })
    expect(plain.success ? undefined : [plain.error.error, plain.error.detail]).toStrictEqual([
      'invalid_request',
      'the response must be encrypted (direct_post.jwt) but came in plain text',
    ])
  })
})
