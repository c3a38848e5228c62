import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testDatabases } from '@credential-service/db-schema/testing'
import { ConfigError } from '@credential-service/server-kit'
import { afterAll, describe, expect, it } from 'vitest'
import { startAllInOne } from './harness'

const EXAMPLE = new URL('../../../docker/config/acme', import.meta.url).pathname
const scratch: string[] = []
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
})

describe.each(testDatabases())('CONFIG_IMPORT_DIR at start-up on $name', (testDatabase) => {
  it('imports the folder before serving; its client can get a token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'startup-'))
    scratch.push(dir)
    const tenant = `acme-${crypto.randomUUID().slice(0, 8)}`
    const clientId = `backend-${crypto.randomUUID().slice(0, 8)}`
    cpSync(EXAMPLE, join(dir, tenant), { recursive: true })
    renameSync(join(dir, tenant, 'clients', 'backend.json'), join(dir, tenant, 'clients', `${clientId}.json`))
    const { app } = await startAllInOne(testDatabase, undefined, { CONFIG_IMPORT_DIR: dir })
    try {
      const token = await app.inject({
        method: 'POST',
        url: '/api/oauth2/token',
        payload: {
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: 'example-backend-client-secret-change-me',
        },
      })
      expect(token.statusCode).toBe(200)
      const jwks = await app.inject({ url: `/issuers/${tenant}/jwks` })
      expect(jwks.json().keys).toHaveLength(2)
    } finally {
      await app.close()
    }
  })

  it('a rejected tenant stops the start with the report', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'startup-bad-'))
    scratch.push(dir)
    mkdirSync(join(dir, 'broken', 'credentials'), { recursive: true })
    writeFileSync(
      join(dir, 'broken', 'credentials', 'old.json'),
      JSON.stringify({ id: 'old', claims: {}, config: { format: 'dc+sd-jwt' } }),
    )
    const error = await startAllInOne(testDatabase, undefined, { CONFIG_IMPORT_DIR: dir }).catch(
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(ConfigError)
    expect(String((error as Error).message)).toContain('broken/credentials/old.json claims')
  })
})
