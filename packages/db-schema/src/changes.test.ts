import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import {
  announceStatusListChange,
  onStatusListChange,
  onTenantChange,
  relayChange,
  TENANT_CHANGES_CHANNEL,
} from './changes'
import { recordAudit } from './repositories/audit-log'
import { testDatabases } from './testing'

const audit = (tenantId: string) =>
  ({
    tenantId,
    actorClientId: 'test',
    action: 'update',
    resourceType: 'tenant',
    resourceId: tenantId,
  }) as const

describe.each(testDatabases())('tenant change notifications on $name', ({ name, open }) => {
  it('an audited change tells this process at once', async () => {
    const database = await open()
    const tenant = `chg-${crypto.randomUUID()}`
    const heard: string[] = []
    const stop = onTenantChange((id) => heard.push(id))
    try {
      await database.db.execute(sql`insert into tenants (id, name) values (${tenant}, 'x')`)
      await database.db.transaction((tx) => recordAudit(tx, audit(tenant)))
      expect(heard).toContain(tenant)
    } finally {
      stop()
      await database.close()
    }
  })

  it.runIf(name === 'postgres')(
    'other processes hear a committed change through NOTIFY, and nothing of a rolled-back one',
    async () => {
      // Two handles = two processes' pools; the second only hears what PostgreSQL delivers.
      const writer = await open()
      const reader = await open()
      const tenant = `chg-${crypto.randomUUID()}`
      const delivered: string[] = []
      const unlisten = await reader.listen(TENANT_CHANGES_CHANNEL, (id) => delivered.push(id))
      try {
        await writer.db.execute(sql`insert into tenants (id, name) values (${tenant}, 'x')`)
        await writer.db
          .transaction(async (tx) => {
            await recordAudit(tx, audit(tenant))
            throw new Error('roll back')
          })
          .catch(() => {})
        await writer.db.transaction((tx) => recordAudit(tx, audit(tenant)))
        for (let i = 0; i < 50 && !delivered.includes(tenant); i++)
          await new Promise((r) => setTimeout(r, 20))
        // Files share the database: other files' tenants are heard too.
        expect(delivered.filter((id) => id === tenant)).toStrictEqual([tenant])
      } finally {
        await unlisten()
        await writer.close()
        await reader.close()
      }
    },
  )

  it.runIf(name === 'postgres')(
    'F-35: a status list change reaches other processes as such, not as a tenant configuration change',
    async () => {
      const writer = await open()
      const reader = await open()
      const tenant = `chg-${crypto.randomUUID()}`
      const lists: string[] = []
      const configs: string[] = []
      const stopLists = onStatusListChange((id) => lists.push(id))
      const stopConfigs = onTenantChange((id) => configs.push(id))
      const unlisten = await reader.listen(TENANT_CHANGES_CHANNEL, relayChange)
      try {
        await writer.db.transaction((tx) => announceStatusListChange(tx, tenant))
        for (let i = 0; i < 50 && !lists.includes(tenant); i++) await new Promise((r) => setTimeout(r, 20))
        expect(lists.filter((id) => id === tenant)).toStrictEqual([tenant])
        expect(configs).not.toContain(tenant)
        expect(configs.some((id) => id.includes(':'))).toBe(false)
      } finally {
        stopLists()
        stopConfigs()
        await unlisten()
        await writer.close()
        await reader.close()
      }
    },
  )
})
