import { describe, expect, it } from 'vitest'
import { retryWhileUnavailable } from './retry-while-unavailable'

// What postgres.js rejects a statement with when its connection was reset (a query's error).
const connectionClosed = () =>
  Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED', query: 'select 1' })

/** Issue 36: the webhook outbox waits out a reset connection for its idempotent statements. */
describe('retryWhileUnavailable', () => {
  it('runs the statement again while the database is unavailable and answers its result', async () => {
    let calls = 0
    const result = await retryWhileUnavailable(async () => {
      calls++
      if (calls < 3) throw connectionClosed()
      return 'recorded'
    })
    expect({ result, calls }).toStrictEqual({ result: 'recorded', calls: 3 })
  })

  it('throws any other error at once: a constraint violation is not retried', async () => {
    let calls = 0
    const violation = Object.assign(new Error('duplicate key'), {
      code: '23505',
      query: 'insert',
      name: 'PostgresError',
    })
    await expect(
      retryWhileUnavailable(async () => {
        calls++
        throw violation
      }),
    ).rejects.toBe(violation)
    expect(calls).toBe(1)
  })

  it('gives up when told to stop (the process is closing)', async () => {
    let calls = 0
    await expect(
      retryWhileUnavailable(
        async () => {
          calls++
          throw connectionClosed()
        },
        () => true,
      ),
    ).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' })
    expect(calls).toBe(1)
  })
})
