import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TEST_MASTER_SECRET } from '@credential-service/db-schema/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { freshDatabase, requestClientToken, type ServiceProcess, startProcess } from './processes'

const EXAMPLE = new URL('../../../docker/config/acme', import.meta.url).pathname
const ROUNDS = 5
const root = { id: 'first-deploy-root', secret: 'first-deploy-root-secret-0123456789' }

const importDir = mkdtempSync(join(tmpdir(), 'first-deploy-'))
cpSync(EXAMPLE, join(importDir, 'acme'), { recursive: true })
afterAll(() => rmSync(importDir, { recursive: true, force: true }))

const token = async (origin: string, clientId: string, clientSecret: string) =>
  (await requestClientToken(origin, clientId, clientSecret)).status

describe.runIf(process.env.TEST_DATABASE_URL)(
  'first deploy: two of each app start at once on an empty database',
  () => {
    for (let round = 1; round <= ROUNDS; round++) {
      // Round 1 also imports one folder from both management processes at once.
      const withImport = round === 1
      it(`round ${round}${withImport ? ' (with CONFIG_IMPORT_DIR)' : ''}: every process comes up and stays up`, async () => {
        const database = await freshDatabase()
        const processes: ServiceProcess[] = []
        try {
          const env = {
            DATABASE_URL: database.url,
            MASTER_SECRET: TEST_MASTER_SECRET,
            AUTH_CLIENT_ID: root.id,
            AUTH_CLIENT_SECRET: root.secret,
            ...(withImport ? { CONFIG_IMPORT_DIR: importDir } : {}),
          }
          const apps = ['management', 'management', 'issuer', 'issuer', 'verifier', 'verifier'] as const
          processes.push(...(await Promise.all(apps.map((app) => startProcess(app, env)))))
          const ready = await Promise.all(processes.map((p) => p.ready()))
          for (const [n, p] of processes.entries()) {
            expect(ready[n], `${p.app} ${p.origin}: ${p.stderr()}`).toBe(200)
          }
          for (const p of processes) {
            expect(p.exitCode(), `${p.app}: ${p.stderr()}`).toBeNull()
            expect((await fetch(`${p.origin}/readyz`)).status).toBe(200)
          }
          for (const management of processes.filter((p) => p.app === 'management')) {
            expect(await token(management.origin, root.id, root.secret)).toBe(200)
            if (withImport) {
              expect(
                await token(management.origin, 'backend', 'example-backend-client-secret-change-me'),
              ).toBe(200)
            }
          }
        } finally {
          await Promise.all(processes.map((p) => p.stop()))
          await database.drop()
        }
      }, 120_000)
    }
  },
)
