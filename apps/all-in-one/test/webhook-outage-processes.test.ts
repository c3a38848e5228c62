import { TEST_MASTER_SECRET } from '@credential-service/db-schema/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresFront, startPostgresFront } from './postgres-front'
import { type FreshDatabase, freshDatabase, type ServiceProcess, startProcess } from './processes'

const adminUrl = process.env.TEST_DATABASE_URL
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface LogLine {
  level: number
  code?: string
  msg: string
}

/**
 * Issue 36: the webhook outbox drains every WEBHOOK_POLL_SECONDS in the background. While the
 * database is away its drains fail: docs/operations.md says an outage is one warn line, not an
 * error per drain. An issuer process on a database of its own (no other suite's deliveries),
 * behind a front that shuts the database down and refuses connections as a server that stops.
 */
describe.skipIf(!adminUrl)('webhook outbox during a database outage (PostgreSQL, a process)', () => {
  let database: FreshDatabase
  let front: PostgresFront
  let issuer: ServiceProcess

  beforeAll(async () => {
    database = await freshDatabase()
    front = await startPostgresFront(database.url)
    issuer = await startProcess(
      'issuer',
      {
        DATABASE_URL: front.url,
        MASTER_SECRET: TEST_MASTER_SECRET,
        WEBHOOK_POLL_SECONDS: '1',
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
      },
      { captureStdout: true },
    )
    expect(await issuer.ready(), issuer.stderr()).toBe(200)
  }, 60_000)

  afterAll(async () => {
    await issuer?.stop()
    await front?.close()
    await database?.drop()
  })

  const lines = (from: number): LogLine[] =>
    issuer
      .stdout()
      .slice(from)
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine)
  const outbox = (from: number) => lines(from).filter((line) => line.msg.startsWith('webhook outbox'))

  /** Takes the database away for about five polls; what the process logged meanwhile. */
  async function outage(): Promise<LogLine[]> {
    const from = issuer.stdout().length
    front.refuse('the database system is shutting down')
    front.shutDown()
    await sleep(5000)
    const during = lines(from)
    front.refuse(undefined)
    return during
  }

  async function recovered(from: number) {
    for (let waited = 0; waited < 20_000; waited += 200) {
      if (outbox(from).some((line) => line.code === 'database_available')) return
      await sleep(200)
    }
    throw new Error(`no recovery line: ${issuer.stdout().slice(from)}`)
  }

  it('issue 36: an outage is one warn line per outage, never an error; the recovery is one info line', async () => {
    for (let round = 0; round < 2; round++) {
      const from = issuer.stdout().length
      const during = await outage()
      // Five failed drains at least (one a second), one line.
      expect(
        during.filter((line) => line.msg.startsWith('webhook outbox')),
        JSON.stringify(during),
      ).toStrictEqual([
        expect.objectContaining({
          level: 40,
          code: 'database_unavailable',
          msg: expect.stringMatching(/^webhook outbox: .+; retrying until it answers$/),
        }),
      ])
      expect(during.filter((line) => line.level >= 50)).toStrictEqual([])
      await recovered(from)
      expect(outbox(from).filter((line) => line.level >= 50)).toStrictEqual([])
    }
  }, 90_000)
})
