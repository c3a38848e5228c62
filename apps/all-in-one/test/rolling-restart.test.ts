import { type ChildProcess, spawn } from 'node:child_process'
import { Agent, createServer, request, type Server } from 'node:http'
import { TEST_MASTER_SECRET } from '@credential-service/db-schema/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { appEntry } from '../../../scripts/test-bundles'
import { freePort } from './free-port'
import { issueOverHttp } from './wallet'

const root = new URL('../../..', import.meta.url).pathname
const databaseUrl = process.env.TEST_DATABASE_URL
const FLOWS = 120
const IN_FLIGHT = 8
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** One standalone process as the image runs it (`node apps/x/dist/main.js`). */
function startProcess(app: 'management' | 'issuer', port: number, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, appEntry(app), {
    cwd: root,
    env: { ...env, PORT: String(port) },
    stdio: 'ignore',
  })
}

/**
 * What `GET /readyz` says: `ready`, `leaving` (draining, or the port refuses connections), or
 * `unsure` (a 503 of a slow database ping or no answer within 2 s, as on a busy machine).
 */
async function readyz(origin: string): Promise<'ready' | 'leaving' | 'unsure'> {
  try {
    const response = await fetch(`${origin}/readyz`, { signal: AbortSignal.timeout(2000) })
    const { status } = (await response.json()) as { status: string }
    return response.ok ? 'ready' : status === 'draining' ? 'leaving' : 'unsure'
  } catch (error) {
    return (error as Error).name === 'TimeoutError' ? 'unsure' : 'leaving'
  }
}

async function waitReady(origin: string) {
  for (let attempt = 0; attempt < 600; attempt++) {
    if ((await readyz(origin)) === 'ready') return
    await sleep(200)
  }
  throw new Error(`${origin} never became ready`)
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  )

/**
 * A plain balancer, as a Kubernetes Service with an ingress is: round-robin over the backends
 * whose `/readyz` answers 200 (polled every 150 ms), keep-alive connections to them,
 * and no retry: a reset or refused connection is the client's 502.
 */
function startBalancer(management: string, issuers: string[]) {
  const ready = new Map(issuers.map((origin) => [origin, false]))
  const agent = new Agent({ keepAlive: true })
  const seen = { failures: [] as string[], unavailableWithoutRetryAfter: 0 }
  let polling = true
  let turn = 0
  const poll = async (origin: string) => {
    // A leaving backend is out at once; an unsure one only after three polls in a row, like a
    // readiness probe's failureThreshold.
    let unsure = 0
    while (polling) {
      const answer = await readyz(origin)
      unsure = answer === 'unsure' ? unsure + 1 : 0
      ready.set(
        origin,
        answer === 'ready' || (answer === 'unsure' && unsure < 3 && ready.get(origin) === true),
      )
      await sleep(150)
    }
  }
  for (const origin of issuers) void poll(origin)
  const server: Server = createServer((incoming, outgoing) => {
    const url = incoming.url ?? '/'
    const live = issuers.filter((origin) => ready.get(origin))
    const target = url.startsWith('/api') ? management : live[turn++ % live.length]
    if (!target) {
      seen.failures.push(`${url}: no ready backend`)
      outgoing.writeHead(502).end()
      return
    }
    const { connection: _, 'keep-alive': __, ...headers } = incoming.headers
    const upstream = request(`${target}${url}`, { method: incoming.method, headers, agent }, (answer) => {
      if (answer.statusCode === 503 && !answer.headers['retry-after']) seen.unavailableWithoutRetryAfter++
      const { connection: _c, 'keep-alive': _k, ...back } = answer.headers
      outgoing.writeHead(answer.statusCode ?? 502, back)
      answer.pipe(outgoing)
    })
    upstream.on('error', (error: Error & { code?: string }) => {
      seen.failures.push(`${url}: ${error.code ?? error.message}`)
      if (!outgoing.headersSent) outgoing.writeHead(502)
      outgoing.end()
    })
    incoming.pipe(upstream)
  })
  return {
    server,
    seen,
    /** Whether the balancer itself routes to `origin` now (as Service endpoints list a Ready pod). */
    routes: (origin: string) => ready.get(origin) === true,
    close: async () => {
      polling = false
      agent.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

describe.skipIf(!databaseUrl)('rolling restart of two issuer processes (PostgreSQL)', () => {
  let balancer: ReturnType<typeof startBalancer>
  let origin: string
  let issuerPorts: number[]
  let env: Record<string, string>
  const children = new Set<ChildProcess>()
  const start = (app: 'management' | 'issuer', port: number) => {
    const child = startProcess(app, port, env)
    children.add(child)
    child.once('exit', () => children.delete(child))
    return child
  }
  const issuers: ChildProcess[] = []

  beforeAll(async () => {
    const [proxyPort, managementPort, ...ports] = await Promise.all([0, 1, 2, 3].map(() => freePort()))
    issuerPorts = ports
    origin = `http://127.0.0.1:${proxyPort}`
    env = {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl as string,
      DATABASE_POOL_SIZE: '4',
      // The pool wait is not what this test measures, and CI machines are shared.
      DATABASE_CONNECT_TIMEOUT_MS: '15000',
      PUBLIC_URL: origin,
      HOST: '127.0.0.1',
      MASTER_SECRET: TEST_MASTER_SECRET,
      AUTH_CLIENT_ID: `root-${crypto.randomUUID()}`,
      AUTH_CLIENT_SECRET: 'rolling-restart-root-secret-0123456789',
      RATE_LIMIT_WALLET_PER_MINUTE: '0',
      WEBHOOK_POLL_SECONDS: '3600',
      SHUTDOWN_DRAIN_SECONDS: process.env.TEST_SHUTDOWN_DRAIN_SECONDS ?? '3',
      LOG_LEVEL: 'error',
    }
    const managementOrigin = `http://127.0.0.1:${managementPort}`
    const issuerOrigins = issuerPorts.map((port) => `http://127.0.0.1:${port}`)
    start('management', managementPort as number)
    for (const port of issuerPorts) issuers.push(start('issuer', port))
    await Promise.all([managementOrigin, ...issuerOrigins].map(waitReady))
    balancer = startBalancer(managementOrigin, issuerOrigins)
    await new Promise<void>((resolve) => balancer.server.listen(proxyPort, '127.0.0.1', resolve))
  }, 240_000)

  afterAll(async () => {
    await balancer?.close()
    for (const child of children) child.kill('SIGKILL')
    await Promise.all([...children].map(exited))
  })

  it('SIGTERM drains: no flow fails while each issuer restarts in turn, and every 503 has Retry-After', async () => {
    const post = async (path: string, body: unknown, token?: string) => {
      const response = await fetch(`${origin}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(body),
      })
      expect(response.status, path).toBeLessThan(300)
      // biome-ignore lint/suspicious/noExplicitAny: test reads loosely typed JSON answers
      return (await response.json()) as Record<string, any>
    }
    const tokenOf = async (id: string, secret: string) =>
      (
        await post('/api/oauth2/token', {
          grant_type: 'client_credentials',
          client_id: id,
          client_secret: secret,
        })
      ).access_token as string
    const rootToken = await tokenOf(env.AUTH_CLIENT_ID as string, env.AUTH_CLIENT_SECRET as string)
    const tenant = `roll-${crypto.randomUUID().slice(0, 8)}`
    await post('/api/tenants', { id: tenant, name: tenant }, rootToken)
    const client = await post(
      `/api/tenants/${tenant}/clients`,
      { roles: ['key:manage', 'issuance:config', 'issuance:offer'] },
      rootToken,
    )
    const token = await tokenOf(client.clientId, client.clientSecret)
    await post('/api/key-chains', { source: 'generate', id: 'keys' }, token)
    await post(
      '/api/credentials',
      {
        id: 'pid',
        config: { format: 'dc+sd-jwt', vct: 'urn:x' },
        keyChainId: 'keys',
        fields: [{ path: ['name'], type: 'string', defaultValue: 'Erika' }],
      },
      token,
    )

    // The wallets: pre-authorized flows, IN_FLIGHT at a time, until FLOWS are done and the
    // restart is over.
    let restarted = false
    let started = 0
    const failed: string[] = []
    const wallet = async () => {
      while (started < FLOWS || !restarted) {
        started++
        await issueOverHttp({
          apiBase: origin,
          auth: { authorization: `Bearer ${token}` },
          configurationId: 'pid',
          claims: {},
        }).catch((error: Error) => failed.push(error.message))
      }
    }
    const load = Promise.all(Array.from({ length: IN_FLIGHT }, wallet))

    // The rolling restart: stop one issuer (SIGTERM), start its replacement, wait until it is
    // ready, then the next, as a Deployment with maxUnavailable 0 does.
    const exitCodes: (number | null)[] = []
    for (const [slot, port] of issuerPorts.entries()) {
      await sleep(500)
      const old = issuers[slot] as ChildProcess
      old.kill('SIGTERM')
      exitCodes.push(await exited(old))
      issuers[slot] = start('issuer', port)
      // The next pod stops only once the balancer routes to the new one (maxUnavailable: 0).
      while (!balancer.routes(`http://127.0.0.1:${port}`)) await sleep(100)
    }
    restarted = true
    await load

    expect({ exitCodes, failed, ...balancer.seen }).toStrictEqual({
      exitCodes: [0, 0],
      failed: [],
      failures: [],
      unavailableWithoutRetryAfter: 0,
    })
    expect(started).toBeGreaterThanOrEqual(FLOWS)
  }, 240_000)
})
