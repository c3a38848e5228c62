import { sql } from 'drizzle-orm'
import { describe, expect, it } from 'vitest'
import { queryRows, testDatabases } from './testing'

describe.each(testDatabases())('database on $name', ({ open }) => {
  it('spec §7: a raw insert of a vault key chain without externalKeyId is aborted by the CHECK', async () => {
    const database = await open()
    const tenant = `t-${crypto.randomUUID()}`
    try {
      await database.db.execute(sql`insert into tenants (id, name) values (${tenant}, 'Check test')`)
      for (const provider of ['vault', 'aws-kms']) {
        await expect(
          database.db.execute(
            sql`insert into key_chains (tenant_id, id, kms_provider, external_key_id, algorithm, certificate_mode, subject, active_jwk, active_kid, active_public_jwk) values (${tenant}, ${`kc-${provider}`}, ${provider}, null, 'ES256', 'none', 'CN=x', 'x', 'kid', '{}')`,
          ),
        ).rejects.toMatchObject({
          cause: expect.objectContaining({
            message: expect.stringContaining('key_chains_external_key_id_required'),
          }),
        })
      }
      // An update that clears externalKeyId of an external key chain is aborted too.
      await database.db.execute(
        sql`insert into key_chains (tenant_id, id, kms_provider, external_key_id, algorithm, certificate_mode, subject, active_jwk, active_kid, active_public_jwk) values (${tenant}, 'kc-ok', 'vault', 'transit/key1', 'ES256', 'none', 'CN=x', 'x', 'kid', '{}')`,
      )
      await expect(
        database.db.execute(
          sql`update key_chains set external_key_id = null where tenant_id = ${tenant} and id = 'kc-ok'`,
        ),
      ).rejects.toThrow()
      // A db key chain needs no external id.
      await database.db.execute(
        sql`insert into key_chains (tenant_id, id, kms_provider, external_key_id, algorithm, certificate_mode, subject, active_jwk, active_kid, active_public_jwk) values (${tenant}, 'kc-db', 'db', null, 'ES256', 'none', 'CN=x', 'x', 'kid', '{}')`,
      )
      const list = await queryRows(
        database.db,
        sql`select id, external_key_id from key_chains where tenant_id = ${tenant} order by id`,
      )
      expect(list).toStrictEqual([
        { id: 'kc-db', external_key_id: null },
        { id: 'kc-ok', external_key_id: 'transit/key1' },
      ])
    } finally {
      await database.db.execute(sql`delete from tenants where id = ${tenant}`)
      await database.close()
    }
  })

  it('migrations are idempotent: applying them again changes nothing', async () => {
    const database = await open()
    try {
      await database.migrate()
      expect(await database.ping()).toBe(true)
    } finally {
      await database.close()
    }
  })
})
