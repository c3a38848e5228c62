import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { TEST_MASTER_SECRET } from '@credential-service/db-schema/testing'
import { describe, expect, it } from 'vitest'

const root = new URL('../../..', import.meta.url).pathname
const env = {
  PATH: process.env.PATH ?? '',
  PUBLIC_URL: 'http://localhost',
  MASTER_SECRET: TEST_MASTER_SECRET,
  AUTH_CLIENT_ID: `root-${crypto.randomUUID()}`,
  AUTH_CLIENT_SECRET: 'standalone-root-secret-0123456789',
  LOG_LEVEL: 'error',
}
const entry = (app: string) => ['--import', 'tsx', `apps/${app}/src/main.ts`]

describe.each(['management', 'issuer', 'verifier'])('standalone %s process', (app) => {
  it('DESIGN.md: refuses to start without DATABASE_URL', () => {
    const result = spawnSync(process.execPath, entry(app), {
      cwd: root,
      env,
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(`DATABASE_URL is required by the standalone ${app} app`)
  })

  it.runIf(process.env.TEST_DATABASE_URL)('starts on PostgreSQL and answers / and /healthz', async () => {
    const port = 40_000 + Math.floor(Math.random() * 10_000)
    const child: ChildProcess = spawn(process.execPath, entry(app), {
      cwd: root,
      env: { ...env, DATABASE_URL: process.env.TEST_DATABASE_URL, PORT: String(port), HOST: '127.0.0.1' },
      stdio: 'ignore',
    })
    try {
      let health: Response | undefined
      for (let attempt = 0; attempt < 100 && !health; attempt++) {
        health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined)
        if (!health) await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(health?.status).toBe(200)
      expect(health?.headers.get('x-service-version')).toBe('5.0.0')
      const home = await fetch(`http://127.0.0.1:${port}/`)
      expect(await home.json()).toStrictEqual({ name: 'credential-service' })
    } finally {
      child.kill('SIGTERM')
      await new Promise((resolve) => child.once('exit', resolve))
    }
    expect(child.exitCode).toBe(0)
  })
})
