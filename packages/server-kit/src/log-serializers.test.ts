import { describe, expect, it } from 'vitest'
import { loggableUrl, serializeError } from './log-serializers'

describe('loggableUrl', () => {
  it('issue 11: every query value is redacted but paging and filters; names stay', () => {
    expect(loggableUrl('/issuers/t/authorize?request_uri=urn%3Ax&flag&limit=5&state=s&status=active')).toBe(
      '/issuers/t/authorize?request_uri=[redacted]&flag&limit=5&state=[redacted]&status=active',
    )
    expect(loggableUrl('/api/tenants?cursor=abc&limit=2')).toBe('/api/tenants?cursor=abc&limit=2')
    expect(loggableUrl('/api/tenants')).toBe('/api/tenants')
  })

  it('issue 11: capability segments are redacted whatever follows them; other ids stay', () => {
    expect(loggableUrl('/issuers/t/offers/ses_abc/')).toBe('/issuers/t/offers/[redacted]/')
    expect(loggableUrl('/verifiers/t/responses/abc%2Fdef')).toBe('/verifiers/t/responses/[redacted]')
    expect(loggableUrl('/api/tenants/t/sessions/ses_abc')).toBe('/api/tenants/t/sessions/[redacted]')
    expect(loggableUrl('/api/key-chains/keys')).toBe('/api/key-chains/keys')
    expect(loggableUrl('/issuers/t/status-lists/1')).toBe('/issuers/t/status-lists/1')
  })
})

describe('serializeError', () => {
  it('issue 11: drizzle’s params and a database error’s detail are dropped; values are scrubbed from every message of the chain', () => {
    const secret = 'secret-value-123'
    const driver = Object.assign(new Error(`invalid input syntax for type json: "${secret}"`), {
      severity: 'ERROR',
      code: '22P02',
      detail: `Token "${secret}" is invalid.`,
      where: `JSON data, line 1: ${secret}`,
      constraint_name: undefined,
    })
    // postgres.js attaches the statement's values without making them enumerable.
    Object.defineProperty(driver, 'parameters', { value: [secret, { nested: secret }], enumerable: false })
    const drizzle = Object.assign(new Error(`Failed query: select $1::json\nparams: ${secret}`), {
      query: 'select $1::json',
      params: [secret],
      cause: driver,
    })
    const serialized = serializeError(drizzle)
    expect(JSON.stringify(serialized)).not.toContain(secret)
    expect(serialized).toMatchObject({
      type: 'Error',
      message: 'Failed query: select $1::json',
      query: 'select $1::json',
      cause: {
        code: '22P02',
        severity: 'ERROR',
        message: 'invalid input syntax for type json: "[redacted]"',
      },
    })
    expect(serialized).not.toHaveProperty('params')
    expect(serialized.cause).not.toHaveProperty('detail')
    expect(serialized.cause).not.toHaveProperty('where')
  })

  it('issue 11: an error that is not from the database keeps its fields, detail included', () => {
    const error = Object.assign(new Error('boom'), { code: 'not_found', detail: 'tenant was not found' })
    expect(serializeError(error)).toMatchObject({
      message: 'boom',
      code: 'not_found',
      detail: 'tenant was not found',
    })
  })
})
