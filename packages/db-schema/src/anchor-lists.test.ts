import { randomBytes } from 'node:crypto'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { drizzle } from 'drizzle-orm/pglite'
import { migrate } from 'drizzle-orm/pglite/migrator'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anchorsTrustListCertificates, anchorsTrustListId } from './anchor-lists'
import { migrationsFolder } from './client'

const MIGRATION = '0026_pem_anchors_to_trust_lists'
const pem = (n: number) => `-----BEGIN CERTIFICATE-----\nMIIB${n}AAAA\n-----END CERTIFICATE-----`

/** A copy of the migrations folder whose journal ends before `tag`: a database of the previous version. */
function foldersUntil(tag: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'))
  cpSync(migrationsFolder(), dir, { recursive: true })
  const journalPath = join(dir, 'meta', '_journal.json')
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] }
  const at = journal.entries.findIndex((entry) => entry.tag === tag)
  writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, at) }))
  return dir
}

/** A fresh database of one kind, empty: PGlite, or a new PostgreSQL database next to TEST_DATABASE_URL's. */
interface Fresh {
  query<T>(text: string, params?: unknown[]): Promise<T[]>
  exec(text: string): Promise<void>
  migrate(folder: string): Promise<void>
  close(): Promise<void>
}

async function freshPglite(): Promise<Fresh> {
  const client = await PGlite.create('memory://')
  return {
    query: async <T>(text: string, params: unknown[] = []) => (await client.query<T>(text, params)).rows,
    exec: async (text) => void (await client.exec(text)),
    migrate: (folder) => migrate(drizzle(client), { migrationsFolder: folder }),
    close: () => client.close(),
  }
}

// On PostgreSQL the default collation is the server's: the id must not depend on it (COLLATE "C").
async function freshPostgres(baseUrl: string): Promise<Fresh> {
  const name = `cs_anchors_${randomBytes(6).toString('hex')}`
  const admin = postgres(baseUrl, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  const url = new URL(baseUrl)
  url.pathname = `/${name}`
  const sql = postgres(url.href, { max: 1, onnotice: () => {} })
  return {
    query: async <T>(text: string, params: unknown[] = []) =>
      Array.from(await sql.unsafe(text, params as never[]), (row) => ({ ...row }) as T),
    exec: async (text) => void (await sql.unsafe(text)),
    migrate: (folder) => migratePostgres(drizzlePostgres(sql), { migrationsFolder: folder }),
    async close() {
      await sql.end()
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
    },
  }
}

const postgresUrl = process.env.TEST_DATABASE_URL
const kinds: { name: string; open: () => Promise<Fresh> }[] = [
  { name: 'pglite', open: freshPglite },
  ...(postgresUrl ? [{ name: 'postgres', open: () => freshPostgres(postgresUrl) }] : []),
]

describe.each(kinds)(
  'issue 25: migration 0026 turns PEM trustAnchors into pem trust lists on $name',
  (kind) => {
    let client: Fresh
    let previous: string
    const query = <T>(text: string, params: unknown[] = []) => client.query<T>(text, params)

    beforeAll(async () => {
      client = await kind.open()
      previous = foldersUntil(MIGRATION)
      await client.migrate(previous)
      await client.exec(`
      insert into tenants (id, name) values ('t1', 'T1'), ('t2', 'T2');
      insert into key_chains (tenant_id, id, algorithm, certificate_mode, subject, active_jwk, active_kid, active_public_jwk)
        values ('t1', 'k', 'ES256', 'self-signed', 'CN=k', 'x', 'kid', '{}'), ('t2', 'k', 'ES256', 'self-signed', 'CN=k', 'x', 'kid', '{}');
      insert into trust_lists (tenant_id, id, source, grace_seconds) values ('t1', 'etsi', '{"type":"pem","certificates":["x"]}', 0);
    `)
      const config = `insert into presentation_configs (tenant_id, id, dcql_query, lifetime_seconds, response_mode, key_chain_id, trust_anchors, trust_list_ids)
      values ($1, $2, '{"credentials":[]}', 300, 'direct_post', 'k', $3, $4)`
      // One set twice in t1 (order and whitespace differ), once in t2; another set on a wallet provider.
      await query(config, ['t1', 'a', [pem(1), ` ${pem(2)}\n`], ['etsi']])
      await query(config, ['t1', 'b', [pem(2), pem(1), pem(1)], null])
      await query(config, ['t2', 'a', [pem(1), pem(2)], null])
      await query(config, ['t1', 'none', null, null])
      await query(
        `insert into wallet_providers (tenant_id, id, name, trust_anchors) values ('t1', 'w', 'W', $1), ('t1', 'empty', 'E', '{}')`,
        [[pem(3)]],
      )
      await client.migrate(migrationsFolder())
    })
    afterAll(async () => {
      await client?.close()
      rmSync(previous, { recursive: true, force: true })
    })

    const shared = anchorsTrustListId([pem(1), pem(2)])
    const own = anchorsTrustListId([pem(3)])

    it('creates one list per tenant and set, with the id the TypeScript gives the same set', async () => {
      expect(shared).toMatch(/^anchors-[0-9a-f]{12}$/)
      expect(anchorsTrustListId([` ${pem(2)}\n`, pem(1), pem(1)])).toBe(shared)
      const lists = await query<Record<string, unknown>>(
        `select tenant_id, id, source, certificates, grace_seconds, next_refresh_at, description
       from trust_lists where id like 'anchors-%' order by tenant_id, id`,
      )
      const certificates = anchorsTrustListCertificates([pem(1), pem(2)])
      expect(lists.map((list) => [list.tenant_id, list.id])).toStrictEqual(
        [
          ['t1', shared],
          ['t1', own],
          ['t2', shared],
        ].sort((a, b) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`)),
      )
      const first = lists.find((list) => list.tenant_id === 't1' && list.id === shared)
      // As the service stores a pem list: its source and certificates, the default grace, no refresh.
      expect(first).toMatchObject({
        source: { type: 'pem', certificates },
        certificates,
        grace_seconds: 86_400,
        next_refresh_at: null,
        description: 'Converted from trustAnchors (PEM)',
      })
    })

    it('names the list in trustListIds (once, after the ids already there) and empties the anchors', async () => {
      const configs = await query<Record<string, unknown>>(
        'select tenant_id, id, trust_anchors, trust_list_ids from presentation_configs order by tenant_id, id',
      )
      expect(configs).toStrictEqual([
        { tenant_id: 't1', id: 'a', trust_anchors: null, trust_list_ids: ['etsi', shared] },
        { tenant_id: 't1', id: 'b', trust_anchors: null, trust_list_ids: [shared] },
        { tenant_id: 't1', id: 'none', trust_anchors: null, trust_list_ids: null },
        { tenant_id: 't2', id: 'a', trust_anchors: null, trust_list_ids: [shared] },
      ])
      const providers = await query<Record<string, unknown>>(
        'select id, trust_anchors, trust_list_ids from wallet_providers order by id',
      )
      expect(providers).toStrictEqual([
        { id: 'empty', trust_anchors: [], trust_list_ids: null },
        { id: 'w', trust_anchors: [], trust_list_ids: [own] },
      ])
    })

    it('writes one audit event per list it created, by system:migration', async () => {
      const events = await query<Record<string, unknown>>(
        `select tenant_id, actor_client_id, action, resource_type, resource_id from audit_log order by tenant_id, resource_id`,
      )
      expect(events).toHaveLength(3)
      for (const event of events)
        expect(event).toMatchObject({
          actor_client_id: 'system:migration',
          action: 'create',
          resource_type: 'trust-list',
        })
    })

    it('changes nothing when run a second time', async () => {
      const snapshot = () =>
        Promise.all(
          ['trust_lists', 'presentation_configs', 'wallet_providers', 'audit_log'].map((table) =>
            query(`select * from ${table} order by 1, 2`),
          ),
        )
      const before = await snapshot()
      await client.exec(readFileSync(join(migrationsFolder(), `${MIGRATION}.sql`), 'utf8'))
      expect(await snapshot()).toStrictEqual(before)
    })
  },
)
