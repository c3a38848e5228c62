import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { TEST_MASTER_SECRET, type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { SERVICE_VERSION, verifyMasterSecret } from '@credential-service/server-kit'
import { describe, expect, it } from 'vitest'
import { appEntry as entry } from '../../../scripts/test-bundles'
import { freePort } from './free-port'

const root = new URL('../../..', import.meta.url).pathname
const env = {
  PATH: process.env.PATH ?? '',
  PUBLIC_URL: 'http://localhost',
  MASTER_SECRET: TEST_MASTER_SECRET,
  AUTH_CLIENT_ID: `root-${crypto.randomUUID()}`,
  AUTH_CLIENT_SECRET: 'standalone-root-secret-0123456789',
  LOG_LEVEL: 'error',
}

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

  it.runIf(process.env.TEST_DATABASE_URL)(
    'a MASTER_SECRET other than the database’s stops the start with status 1 and a clear message',
    async () => {
      // The shared database must already remember the suites' secret, whichever suite runs first.
      const database = await (testDatabases().find((d) => d.name === 'postgres') as TestDatabase).open()
      await verifyMasterSecret(database.db, TEST_MASTER_SECRET)
      await database.close()
      const result = spawnSync(process.execPath, entry(app), {
        cwd: root,
        env: {
          ...env,
          DATABASE_URL: process.env.TEST_DATABASE_URL,
          MASTER_SECRET: 'not-the-secret-this-database-was-set-up-with-0123456789',
          PORT: '0',
        },
        encoding: 'utf8',
        timeout: 60_000,
      })
      expect(result.status).toBe(1)
      expect(result.stderr).toContain(`${app}: invalid configuration`)
      expect(result.stderr).toContain('MASTER_SECRET does not match the secret this database was set up with')
      expect(result.stderr).not.toContain('not-the-secret')
    },
  )

  it.runIf(process.env.TEST_DATABASE_URL)('starts on PostgreSQL and answers / and /healthz', async () => {
    const port = await freePort()
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
      expect(health?.headers.get('x-service-version')).toBe(SERVICE_VERSION)
      const home = await fetch(`http://127.0.0.1:${port}/`)
      expect(await home.json()).toStrictEqual({ name: 'credential-service' })
    } finally {
      child.kill('SIGTERM')
      await new Promise((resolve) => child.once('exit', resolve))
    }
    expect(child.exitCode).toBe(0)
  })
})

describe('management and issuer as separate processes on one PostgreSQL', () => {
  it.runIf(process.env.TEST_DATABASE_URL)(
    'an offer made by management is redeemed at the issuer',
    async () => {
      const managementPort = await freePort()
      const issuerPort = await freePort()
      // Without an ingress, PUBLIC_URL is the issuer's origin: offers point wallets there.
      const shared = {
        ...env,
        DATABASE_URL: process.env.TEST_DATABASE_URL as string,
        HOST: '127.0.0.1',
        PUBLIC_URL: `http://127.0.0.1:${issuerPort}`,
      }
      const children = [
        spawn(process.execPath, entry('management'), {
          cwd: root,
          env: { ...shared, PORT: String(managementPort) },
          stdio: 'ignore',
        }),
        spawn(process.execPath, entry('issuer'), {
          cwd: root,
          env: { ...shared, PORT: String(issuerPort) },
          stdio: 'ignore',
        }),
      ]
      const api = `http://127.0.0.1:${managementPort}`
      const issuerOrigin = `http://127.0.0.1:${issuerPort}`
      try {
        for (const origin of [api, issuerOrigin]) {
          let up = false
          for (let attempt = 0; attempt < 300 && !up; attempt++) {
            up = (await fetch(`${origin}/healthz`).catch(() => undefined))?.ok ?? false
            if (!up) await new Promise((resolve) => setTimeout(resolve, 200))
          }
          expect(up, origin).toBe(true)
        }
        const post = async (url: string, body: unknown, token?: string) => {
          const response = await fetch(url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...(token ? { authorization: `Bearer ${token}` } : {}),
            },
            body: JSON.stringify(body),
          })
          // biome-ignore lint/suspicious/noExplicitAny: test reads loosely typed JSON answers
          return { status: response.status, json: (await response.json()) as Record<string, any> }
        }
        const tokenOf = async (id: string, secret: string) =>
          (
            await post(`${api}/api/oauth2/token`, {
              grant_type: 'client_credentials',
              client_id: id,
              client_secret: secret,
            })
          ).json.access_token as string
        const rootToken = await tokenOf(env.AUTH_CLIENT_ID, env.AUTH_CLIENT_SECRET)
        const tenant = `procs-${crypto.randomUUID().slice(0, 8)}`
        await post(`${api}/api/tenants`, { id: tenant, name: tenant }, rootToken)
        const client = (
          await post(
            `${api}/api/tenants/${tenant}/clients`,
            { roles: ['key:manage', 'issuance:config', 'issuance:offer'] },
            rootToken,
          )
        ).json
        const token = await tokenOf(client.clientId, client.clientSecret)
        await post(`${api}/api/key-chains`, { source: 'generate', id: 'keys' }, token)
        const config = await post(
          `${api}/api/credentials`,
          {
            id: 'pid',
            config: { format: 'dc+sd-jwt', vct: 'urn:x' },
            keyChainId: 'keys',
            fields: [{ path: ['name'], type: 'string', defaultValue: 'Erika' }],
          },
          token,
        )
        expect(config.status).toBe(201)
        const { issueOverHttp } = await import('./wallet')
        const issued = await issueOverHttp({
          apiBase: api,
          auth: { authorization: `Bearer ${token}` },
          configurationId: 'pid',
          claims: {},
        })
        expect(issued.credential).toMatch(/^ey.+~/)
        const session = await fetch(`${api}/api/sessions/${issued.sessionId}`, {
          headers: { authorization: `Bearer ${token}` },
        })
        expect(((await session.json()) as { status: string }).status).toBe('completed')

        // The issuer process caches the tenant's configurations; a change made in the management
        // process reaches it by NOTIFY, well before the cache's 5 s safety TTL.
        const metadataUrl = `${issuerOrigin}/.well-known/openid-credential-issuer/issuers/${tenant}`
        type Metadata = {
          credential_configurations_supported: {
            pid: { credential_metadata?: { display?: { name: string }[] } }
          }
        }
        const displayName = async () =>
          ((await (await fetch(metadataUrl)).json()) as Metadata).credential_configurations_supported.pid
            .credential_metadata?.display?.[0]?.name
        expect(await displayName()).toBeUndefined()
        const replaced = await fetch(`${api}/api/credentials/pid`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({
            id: 'pid',
            config: { format: 'dc+sd-jwt', vct: 'urn:x', display: [{ name: 'Renamed', locale: 'en' }] },
            keyChainId: 'keys',
            fields: [{ path: ['name'], type: 'string', defaultValue: 'Erika' }],
          }),
        })
        expect(replaced.status).toBe(200)
        const changedAt = Date.now()
        let seen: unknown
        while (seen !== 'Renamed' && Date.now() - changedAt < 2000) {
          seen = await displayName()
          if (seen !== 'Renamed') await new Promise((resolve) => setTimeout(resolve, 20))
        }
        expect(seen).toBe('Renamed')
        expect(Date.now() - changedAt).toBeLessThan(2000)
      } finally {
        for (const child of children) child.kill('SIGTERM')
        await Promise.all(children.map((child) => new Promise((resolve) => child.once('exit', resolve))))
      }
    },
    // Two cold Node processes start and migrate on a shared 2-core CI machine: well past the 30 s default.
    120_000,
  )
})
