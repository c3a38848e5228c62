import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const guard = fileURLToPath(new URL('./dead-connection-guard.ts', import.meta.url))
// Where the driver resolves from (server-kit itself does not depend on it).
const dbSchema = fileURLToPath(new URL('../../db-schema', import.meta.url))
const postgresUrl = process.env.TEST_DATABASE_URL

/** A child process with the guard installed (warnings as JSON lines on stdout) that runs `body`. */
async function child(body: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = `
import postgres from 'postgres'
import { guardDeadConnectionErrors } from ${JSON.stringify(guard)}
guardDeadConnectionErrors({ warn: (details, message) => console.log(JSON.stringify({ message, code: details.err.code })) })
${body}
`
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      {
        timeout: 20_000,
        cwd: dbSchema,
      },
    )
    return { code: 0, stdout, stderr }
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string }
    return { code, stdout, stderr }
  }
}

/**
 * Issue 36 item 1: no driver error on a dead connection ends the process; everything else still
 * does, as Node.js' default would.
 */
describe('the dead-connection guard of a process', () => {
  it('still ends the process with status 1 on an uncaught exception of ours', async () => {
    const result = await child(`setImmediate(() => { throw new Error('a bug of ours') })
setTimeout(() => console.log('still alive'), 500)`)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('Uncaught exception: Error: a bug of ours')
    expect(result.stdout).not.toContain('still alive')
  })

  it('still ends the process with status 1 on an unhandled rejection of ours, even with a connection code', async () => {
    const result =
      await child(`Promise.reject(Object.assign(new Error('not the driver'), { code: 'CONNECTION_CLOSED' }))
setTimeout(() => console.log('still alive'), 500)`)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('Unhandled rejection: Error: not the driver')
    expect(result.stdout).not.toContain('still alive')
  })

  it.skipIf(!postgresUrl)(
    'lives on when the driver rejects a statement of a reserved connection whose backend ended and nobody awaits it, warning once (PostgreSQL)',
    async () => {
      const name = `cs_guard_${randomBytes(4).toString('hex')}`
      const url = new URL(postgresUrl ?? '')
      url.searchParams.set('application_name', name)
      const result = await child(`
const sql = postgres(${JSON.stringify(url.href)}, { max: 2, onnotice: () => {} })
const admin = postgres(${JSON.stringify(postgresUrl)}, { max: 1, onnotice: () => {} })
for (let round = 0; round < 2; round++) {
  const reserved = await sql.reserve()
  await admin\`select pg_terminate_backend(pid) from pg_stat_activity where application_name = \${${JSON.stringify(name)}}\`
  await new Promise((resolve) => setTimeout(resolve, 200))
  reserved\`select 1\`.execute()
}
await new Promise((resolve) => setTimeout(resolve, 200))
const [{ one }] = await sql\`select 1 as one\`
console.log('still alive, the pool answers', one)
await Promise.all([sql.end(), admin.end()])`)
      expect(result.stderr).toBe('')
      expect(result.code).toBe(0)
      const lines = result.stdout.trim().split('\n')
      expect(lines).toEqual([
        JSON.stringify({
          message: 'database driver error on a closed connection ignored',
          code: 'CONNECTION_CLOSED',
        }),
        'still alive, the pool answers 1',
      ])
    },
  )
})
