import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const child = fileURLToPath(new URL('../test/connection-reset-child.ts', import.meta.url))
const postgresUrl = process.env.TEST_DATABASE_URL

/**
 * Issue 36 item 1: postgres.js 3.4.9 wrote a transaction's ROLLBACK to a connection whose socket
 * had closed from a setImmediate callback, and the TypeError ("Cannot read properties of null
 * (reading 'write')", porsager/postgres#1208) ended the process. patches/postgres@3.4.9.patch
 * fails such a statement instead and keeps the pool's connection usable. A process of its own
 * runs the transactions, so that an uncaught exception shows as its exit.
 */
describe.skipIf(!postgresUrl)('a connection reset during a transaction (PostgreSQL)', () => {
  it('fails the transaction as unavailable, the process lives on and the pool answers again', async () => {
    const name = `cs_reset_${randomBytes(4).toString('hex')}`
    const { stdout } = await run(process.execPath, ['--import', 'tsx', child, postgresUrl ?? '', name], {
      timeout: 25_000,
    })
    const result = JSON.parse(stdout.trim()) as {
      ownBackend: boolean[]
      otherSession: boolean[]
      committedAfter: boolean
      recoveredMs: number
    }
    expect(result.ownBackend).toEqual([true, true, true, true])
    expect(result.otherSession).toEqual([true, true])
    expect(result.committedAfter).toBe(true)
    // A new connection, not the connect timeout (3 s) of a connection that never sends its startup.
    expect(result.recoveredMs).toBeLessThan(2000)
  })
})
