import { describe, expect, it } from 'vitest'
import { databaseRefusal, isDatabaseUnavailable } from './unavailable'

/** A server error as postgres.js throws it (a PostgresError carries `query`), inside drizzle's wrapper. */
function serverError(code: string, severity: 'ERROR' | 'FATAL') {
  const driver = Object.assign(new Error('server error'), { code, severity, query: 'select 1' })
  return Object.assign(new Error('Failed query: select 1', { cause: driver }), { query: 'select 1' })
}

describe('isDatabaseUnavailable: SQLSTATEs that mean "not now" (PostgreSQL appendix A)', () => {
  it.each([
    ['53300', 'FATAL', 'too_many_connections'],
    ['55000', 'FATAL', 'a database with ALLOW_CONNECTIONS false'],
    ['57P01', 'FATAL', 'admin_shutdown'],
    ['57P02', 'FATAL', 'crash_shutdown'],
    ['57P03', 'FATAL', 'cannot_connect_now'],
    ['57014', 'ERROR', 'query_canceled'],
    ['08006', 'FATAL', 'connection_failure'],
  ] as const)('%s (%s, %s) is unavailable', (code, severity, _meaning) => {
    expect(isDatabaseUnavailable(serverError(code, severity))).toBe(true)
  })

  it.each([
    ['55000', 'ERROR', 'object_not_in_prerequisite_state of a statement'],
    ['23505', 'ERROR', 'unique_violation'],
    ['42P01', 'ERROR', 'undefined_table'],
  ] as const)('%s (%s, %s) is a fault of the query, not an outage', (code, severity, _meaning) => {
    expect(isDatabaseUnavailable(serverError(code, severity))).toBe(false)
  })

  it('a connection PostgreSQL refuses at start-up (a PostgresError without query, as a transaction meets it) is unavailable', () => {
    const refused = Object.assign(new Error('the database system is shutting down'), {
      name: 'PostgresError',
      code: '57P03',
      severity: 'FATAL',
      routine: 'ProcessStartupPacket',
    })
    expect(isDatabaseUnavailable(refused)).toBe(true)
    expect(
      isDatabaseUnavailable(Object.assign(new Error('dup'), { name: 'PostgresError', code: '23505' })),
    ).toBe(false)
  })

  it('a refused connection to another service (no query) is not the database', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('refused'), { code: '53300' }))).toBe(false)
  })
})

describe('databaseRefusal', () => {
  it('names too many clients and the connection budget for 53300', () => {
    expect(databaseRefusal(serverError('53300', 'FATAL'))).toContain('too many clients (SQLSTATE 53300)')
    expect(databaseRefusal(serverError('53300', 'FATAL'))).toContain('max_connections')
  })

  it.each(['55000', '57P01', '57P02', '57P03'])('names SQLSTATE %s', (code) => {
    expect(databaseRefusal(serverError(code, 'FATAL'))).toContain(`(SQLSTATE ${code})`)
  })

  it('is undefined for other errors, and for 55000 of a statement', () => {
    expect(databaseRefusal(serverError('57014', 'ERROR'))).toBeUndefined()
    expect(databaseRefusal(serverError('55000', 'ERROR'))).toBeUndefined()
  })
})
