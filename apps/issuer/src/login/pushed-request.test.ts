import { type CredentialConfig, parseParRequest } from '@credential-service/core-domain'
import { describe, expect, it } from 'vitest'
import { pushedRequestOf } from './pushed-request'

/** The request as the PAR route hands it on: parsed by its schema, then read against the issuer's configurations. */
const parsePushedRequest = (body: Record<string, unknown>, known: CredentialConfig[]) =>
  pushedRequestOf(parseParRequest(body), known)

const config = (id: string, scope?: string) =>
  ({ id, config: { format: 'dc+sd-jwt', vct: `urn:${id}`, ...(scope ? { scope } : {}) } }) as CredentialConfig
const configs = [config('pid'), config('mdl', 'org.iso.18013.5.1.mDL')]
const base = {
  response_type: 'code',
  client_id: 'wallet',
  redirect_uri: 'https://wallet.example/cb',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
}
const errorOf = (body: Record<string, unknown>) => {
  try {
    parsePushedRequest(body, configs)
    return undefined
  } catch (error) {
    return (error as { error: string }).error
  }
}

describe('pushed authorization request parsing (RFC 9126 §2.1, OpenID4VCI 1.0 §5.1)', () => {
  it('OpenID4VCI §5.1.1-5.1.2 (I-35): scope names configurations by their scope, unknown scopes are ignored; authorization_details by id', () => {
    const parsed = parsePushedRequest(
      {
        ...base,
        scope: 'org.iso.18013.5.1.mDL unknown',
        authorization_details: JSON.stringify([
          { type: 'openid_credential', credential_configuration_id: 'pid' },
        ]),
      },
      configs,
    )
    expect(parsed.scopeConfigurationIds).toStrictEqual(['mdl'])
    expect(parsed.detailConfigurationIds).toStrictEqual(['pid'])
  })

  it('RFC 9126 §2.1, PKCE §4.4.1 (I-31, I-34, I-37, S-36): refusals carry their OAuth error codes', () => {
    expect(errorOf({ ...base, client_id: ['a', 'b'] })).toBe('invalid_request')
    expect(errorOf({ ...base, request_uri: 'urn:x' })).toBe('invalid_request')
    expect(errorOf({ ...base, code_challenge_method: undefined })).toBe('invalid_request')
    expect(errorOf({ ...base, code_challenge: 'short' })).toBe('invalid_request')
    expect(errorOf({ ...base, response_type: 'code id_token' })).toBe('unsupported_response_type')
    expect(errorOf({ ...base, authorization_details: '[{"type":"other"}]' })).toBe('invalid_request')
    expect(errorOf({ ...base, authorization_details: 'null' })).toBe('invalid_request')
    expect(
      errorOf({
        ...base,
        authorization_details: '[{"type":"openid_credential","credential_configuration_id":"nope"}]',
      }),
    ).toBe('invalid_request')
  })
})

describe('pushed authorization request: hostile authorization_details (issue 19)', () => {
  it('S-123, RFC 9396 §2: authorization_details nested 100,000 deep is invalid_request, not a stack overflow', () => {
    const deep = `[{"type":"openid_credential","credential_configuration_id":"pid","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}]`
    expect(() => parsePushedRequest({ ...base, authorization_details: deep }, configs)).toThrow(
      expect.objectContaining({
        error: 'invalid_request',
        detail: 'authorization_details nests deeper than 64 levels',
      }),
    )
  })
})
