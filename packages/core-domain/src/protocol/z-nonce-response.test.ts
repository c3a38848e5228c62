import { describe, expect, it } from 'vitest'
import { zNonceResponse } from './z-nonce-response'

describe('the nonce response (OpenID4VCI 1.0 §7.2)', () => {
  it('§7.2: the example answer parses; an answer without c_nonce does not', () => {
    expect(zNonceResponse.parse({ c_nonce: 'wKI4LT17ac15ES9bw8ac4' })).toStrictEqual({
      c_nonce: 'wKI4LT17ac15ES9bw8ac4',
    })
    expect(zNonceResponse.safeParse({}).success).toBe(false)
    expect(zNonceResponse.safeParse({ c_nonce: '' }).success).toBe(false)
  })
})
