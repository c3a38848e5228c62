import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import type { DatabaseHandle } from './client'
import type { Database } from './database'
import { createIssuanceSessionRepository } from './repositories/issuance'
import { createSessionWatchRepository, SESSION_EVENTS_CHANNEL } from './repositories/session-watches'
import { queryRows, testDatabases } from './testing'

const settle = () => new Promise((resolve) => setTimeout(resolve, 300))

/** A tenant with one offered issuance session per id, a listener on the channel, and cleanup. */
async function scenario(
  open: () => Promise<DatabaseHandle>,
  ids: string[],
  run: (db: Database, heard: string[]) => Promise<void>,
) {
  const database = await open()
  const tenantId = `sw-${crypto.randomUUID()}`
  const heard: string[] = []
  const unlisten = await database.listen(SESSION_EVENTS_CHANNEL, (id) => heard.push(id))
  try {
    await database.db.execute(sql`insert into tenants (id, name) values (${tenantId}, 'x')`)
    const sessions = createIssuanceSessionRepository(database.db, tenantId)
    for (const id of ids)
      await sessions.insert({
        id,
        status: 'offered',
        credentialConfigurationIds: ['pid'],
        preAuthorizedCodeHash: `code-${id}`,
        createdByClientId: 'cli_test',
        expiresAt: new Date(Date.now() + 60_000),
      })
    await run(database.db, heard)
  } finally {
    await unlisten()
    await database.db.execute(sql`delete from tenants where id = ${tenantId}`)
    await database.close()
  }
}

/**
 * Issue 23 item 2, migration 0018: the session tables' trigger NOTIFYs a session's status changes
 * and deletion while a process holds a lease on it, and stays silent otherwise (unwatched sessions,
 * nearly all, pay no NOTIFY), and leases of a process that died lapse.
 */
describe.each(testDatabases())('session watch leases and the session trigger on $name', ({ open }) => {
  it('notifies a watched session’s status change and deletion; not an unwatched one, nor a change that keeps the status', async () => {
    const watched = `ses_w_${crypto.randomUUID()}`
    const unwatched = `ses_u_${crypto.randomUUID()}`
    await scenario(open, [watched, unwatched], async (db, heard) => {
      const setStatus = (id: string, status: string) =>
        db.execute(sql`update issuance_sessions set status = ${status}, updated_at = now() where id = ${id}`)
      await createSessionWatchRepository(db, 'process-a').watch(watched, 60)
      await setStatus(unwatched, 'token_issued')
      await setStatus(watched, 'offered')
      await settle()
      expect(heard).toStrictEqual([])

      await setStatus(watched, 'token_issued')
      await settle()
      expect(heard).toStrictEqual([watched])

      await db.execute(sql`delete from issuance_sessions where id = ${watched}`)
      await settle()
      expect(heard).toStrictEqual([watched, watched])
    })
  })

  it('a lease that lapsed (its process died) notifies nothing, and any process’s renewal drops it', async () => {
    const id = `ses_l_${crypto.randomUUID()}`
    await scenario(open, [id], async (db, heard) => {
      const dead = createSessionWatchRepository(db, `dead-${crypto.randomUUID()}`)
      await dead.watch(id, 1)
      await new Promise((resolve) => setTimeout(resolve, 1200))
      await db.execute(sql`update issuance_sessions set status = 'token_issued' where id = ${id}`)
      await settle()
      expect(heard).toStrictEqual([])

      const leases = () =>
        queryRows<{ n: number }>(
          db,
          sql`select count(*)::int as n from session_watches where session_id = ${id}`,
        )
      expect((await leases())[0]?.n).toBe(1)
      await createSessionWatchRepository(db, `alive-${crypto.randomUUID()}`).renew(60)
      expect((await leases())[0]?.n).toBe(0)
    })
  })
})
