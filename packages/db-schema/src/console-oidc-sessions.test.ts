import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DatabaseHandle } from './client'
import { createConsoleOidcSessionRepository } from './repositories/console-oidc-sessions'
import { testDatabases } from './testing'

/**
 * Issue 42 item 2: the OIDC console session's renewal is one process's at a time. Two handles on
 * one database (two management processes' pools) renew the same session at once: the provider is
 * asked once (a rotating refresh token is spent once), and both answer the renewed row.
 */
describe.each(testDatabases())('console OIDC session renewal on $name', (testDatabase) => {
  let first: DatabaseHandle
  let second: DatabaseHandle

  beforeAll(async () => {
    first = await testDatabase.open()
    // PGlite is one process's database: the second "process" is the same handle.
    second = testDatabase.name === 'postgres' ? await testDatabase.open() : first
  })
  afterAll(async () => {
    if (second !== first) await second?.close()
    await first?.close()
  })

  it('two processes renew at once: the provider is asked once; a refused renewal ends the session', async () => {
    const repositories = [first, second].map((h) =>
      createConsoleOidcSessionRepository(h.db, { idleSeconds: 600 }),
    )
    const [a, b] = repositories as [
      ReturnType<typeof createConsoleOidcSessionRepository>,
      ReturnType<typeof createConsoleOidcSessionRepository>,
    ]
    const id = randomBytes(16).toString('hex')
    const created = await a.create({
      id,
      subject: 'olivia',
      tenantId: null,
      tokensEncrypted: 'sealed-1',
      accessExpiresAt: new Date(Date.now() + 30_000),
      maxSeconds: 3600,
    })
    let asked = 0
    const renew = async () => {
      asked++
      // The provider takes its time: the other process's renewal waits on the row meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 300))
      return { tokensEncrypted: 'sealed-2', accessExpiresAt: new Date(Date.now() + 300_000) }
    }
    const rows = await Promise.all([
      a.renew(id, created.accessExpiresAt, renew),
      b.renew(id, created.accessExpiresAt, renew),
    ])
    expect(asked).toBe(1)
    expect(rows.map((row) => row?.tokensEncrypted)).toStrictEqual(['sealed-2', 'sealed-2'])

    const renewed = rows[0]?.accessExpiresAt as Date
    expect(await a.renew(id, renewed, async () => undefined)).toBeUndefined()
    expect(await b.touch(id)).toBeUndefined()
  })
})
