/**
 * Starts the service for the bench: the all-in-one process, or (`--separate`) the management,
 * issuer and verifier processes behind a small path-routing ingress in this process, routed as
 * docker/nginx.conf routes them. Reports each server process's pid for CPU and RSS readings.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { Agent, createServer, type IncomingMessage, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../test/free-port'
import { keyProviderEnv } from './key-provider'

const root = new URL('../../..', import.meta.url).pathname

export interface ServerProcess {
  name: string
  pid: number
  /** Where the process itself answers (its `/api/metrics` included). */
  origin: string
}

export interface RunningService {
  /** The one origin wallets and integrators use. */
  base: string
  processes: ServerProcess[]
  rootClient: { id: string; secret: string }
  stop(): Promise<void>
}

// Fixed secrets: a bench database used twice must see the MASTER_SECRET it was set up with.
const SECRETS = {
  MASTER_SECRET: process.env.BENCH_MASTER_SECRET ?? 'bench-master-secret-0123456789abcdef-0123456789',
  AUTH_CLIENT_ID: 'bench-root',
  AUTH_CLIENT_SECRET: 'bench-root-secret-0123456789abcdef',
}
const rootClient = { id: SECRETS.AUTH_CLIENT_ID, secret: SECRETS.AUTH_CLIENT_SECRET }

/** The apps' Node flags: as docker/entrypoint.sh starts them; BENCH_NODE_ARGS replaces these. */
export const appNodeArgs = () =>
  (process.env.BENCH_NODE_ARGS ?? '--max-semi-space-size=4').split(' ').filter(Boolean)

function spawnApp(app: string, env: Record<string, string>, checkout = root): ChildProcess {
  // BENCH_PROFILE=<dir>: V8 CPU profiles of the servers, for finding hot paths.
  const profile = process.env.BENCH_PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
    : []
  const nodeArgs = appNodeArgs()
  // BENCH_FROM_SOURCE=1 runs the TypeScript sources; the built apps otherwise, from `dist` or the
  // folder BENCH_BUNDLE_DIR names (the bench's own test runs the tests' bundles).
  const entry = process.env.BENCH_FROM_SOURCE
    ? ['--import', 'tsx', `apps/${app}/src/main.ts`]
    : [`apps/${app}/${process.env.BENCH_BUNDLE_DIR || 'dist'}/main.js`]
  return spawn(process.execPath, [...nodeArgs, ...profile, ...entry], {
    cwd: checkout,
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...(process.env.DATABASE_POOL_SIZE ? { DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE } : {}),
      ...(process.env.STATUS_LIST_CACHE_MAX_SECONDS
        ? { STATUS_LIST_CACHE_MAX_SECONDS: process.env.STATUS_LIST_CACHE_MAX_SECONDS }
        : {}),
      KEY_ROTATION_CHECK_SECONDS: '0',
      // Every bench wallet calls from 127.0.0.1: limits that never trip but still run on every
      // request, so the bench measures their cost.
      RATE_LIMIT_WALLET_PER_MINUTE: '1000000000',
      RATE_LIMIT_TOKEN_PER_MINUTE: '1000000000',
      // The verifier reads the status lists of the service itself, at its http://127.0.0.1 origin.
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      ...keyProviderEnv(),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
}

/** Up to 60 s: a cold start on a loaded two-core machine (migrations, key set-up) can take 30. */
async function waitHealthy(origin: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`a server process exited with ${child.exitCode}`)
    if ((await fetch(`${origin}/healthz`).catch(() => undefined))?.ok) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${origin} did not become healthy`)
}

async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null) return resolve(undefined)
          child.once('exit', resolve)
          child.kill('SIGTERM')
        }),
    ),
  )
}

/** Waits for `started` to be healthy; when one is not, stops them all, so none outlives a failed run. */
async function healthyOrStopped(started: { origin: string; child: ChildProcess }[], all: ChildProcess[]) {
  try {
    await Promise.all(started.map(({ origin, child }) => waitHealthy(origin, child)))
  } catch (error) {
    await stopAll(all)
    throw error
  }
}

/** `checkout`: the root of a built checkout to run (another one for BENCH_COMPARE); this one by default. */
export async function startAllInOne(
  databaseUrl: string | undefined,
  checkout = root,
  env: Record<string, string> = {},
): Promise<RunningService> {
  const port = await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-'))
  const base = `http://127.0.0.1:${port}`
  const child = spawnApp(
    'all-in-one',
    {
      PORT: String(port),
      PUBLIC_URL: base,
      DATA_DIR: dataDir,
      ...SECRETS,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      ...env,
    },
    checkout,
  )
  await healthyOrStopped([{ origin: base, child }], [child])
  return {
    base,
    processes: [{ name: 'all-in-one', pid: child.pid as number, origin: base }],
    rootClient,
    stop: () => stopAll([child]),
  }
}

/** Which app serves a path (DESIGN.md ingress; docker/nginx.conf). */
export function appFor(path: string): 'management' | 'verifier' | 'issuer' {
  if (path === '/api' || path.startsWith('/api/')) return 'management'
  // The admin console's static files (apps/management/src/routes/console.ts).
  if (path === '/console' || path.startsWith('/console/')) return 'management'
  if (path.startsWith('/verifiers/')) return 'verifier'
  return 'issuer'
}

type App = 'management' | 'issuer' | 'verifier'

/** Routes by path as the ingress does; round robin over an app's processes (BENCH_PODS). */
function startIngress(ports: Record<App, number[]>): Promise<Server> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 })
  const turns = { management: 0, issuer: 0, verifier: 0 }
  // BENCH_STICKY=1: every request of an app to its first process, the control of the two-pod runs
  // (the same processes started, no alternation between them). BENCH_STICKY=client: a client's
  // requests to one process, chosen by a hash of its address (each bench flow has one), as an
  // ingress with client-address affinity does (nginx `hash $remote_addr consistent`).
  const sticky = process.env.BENCH_STICKY
  const pick = (app: App, incoming: IncomingMessage): number => {
    const pool = ports[app]
    if (sticky === 'client') {
      const address = String(incoming.headers['x-forwarded-for'] ?? incoming.socket.remoteAddress)
      return pool[createHash('sha1').update(address).digest().readUInt8(0) % pool.length] as number
    }
    return (sticky ? pool[0] : pool[turns[app]++ % pool.length]) as number
  }
  const ingress = createServer((incoming, outgoing) => {
    const app = appFor(incoming.url ?? '/')
    const upstream = request(
      {
        host: '127.0.0.1',
        port: pick(app, incoming),
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
        agent,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      },
    )
    upstream.on('error', () => {
      outgoing.writeHead(502).end()
    })
    incoming.pipe(upstream)
  })
  return new Promise((resolve) => ingress.listen(0, '127.0.0.1', () => resolve(ingress)))
}

/**
 * BENCH_PIN: each issuer process on a core of its own (taskset), as pods on separate nodes are:
 * two processes taking turns on the same cores pay for each other's cache misses (issue 44).
 */
function pinIssuers(processes: { name: string; child: ChildProcess }[]): void {
  const issuers = processes.filter((p) => p.name.startsWith('issuer'))
  for (const [i, { child }] of issuers.entries()) {
    const pinned = spawnSync('taskset', ['-cp', String(i % cpus().length), String(child.pid)])
    if (pinned.status !== 0) throw new Error(`BENCH_PIN: taskset failed: ${pinned.stderr}`)
  }
}

/**
 * Management, then `pods` issuer and `pods` verifier processes (named `issuer`, `issuer-2`, …),
 * all behind one ingress, as a deployment with that many replicas behind a round-robin balancer.
 */
export async function startSeparate(databaseUrl: string, pods = 1): Promise<RunningService> {
  const ports: Record<App, number[]> = { management: [await freePort()], issuer: [], verifier: [] }
  for (let i = 0; i < pods; i++) {
    ports.issuer.push(await freePort())
    ports.verifier.push(await freePort())
  }
  const ingress = await startIngress(ports)
  const base = `http://127.0.0.1:${(ingress.address() as AddressInfo).port}`
  const shared = { DATABASE_URL: databaseUrl, PUBLIC_URL: base, MASTER_SECRET: SECRETS.MASTER_SECRET }
  const origin = (port: number) => `http://127.0.0.1:${port}`
  // Management first: it migrates the database and creates the root client.
  const managementPort = ports.management[0] as number
  const management = spawnApp('management', {
    ...shared,
    PORT: String(managementPort),
    AUTH_CLIENT_ID: SECRETS.AUTH_CLIENT_ID,
    AUTH_CLIENT_SECRET: SECRETS.AUTH_CLIENT_SECRET,
  })
  const closeIngress = () => new Promise((resolve) => ingress.close(resolve))
  await healthyOrStopped([{ origin: origin(managementPort), child: management }], [management]).catch(
    async (error: unknown) => {
      await closeIngress()
      throw error
    },
  )
  const others = (['issuer', 'verifier'] as const).flatMap((app) =>
    ports[app].map((port, i) => ({
      name: i === 0 ? app : `${app}-${i + 1}`,
      port,
      child: spawnApp(app, { ...shared, PORT: String(port) }),
    })),
  )
  const children = [management, ...others.map((other) => other.child)]
  if (process.env.BENCH_PIN) pinIssuers(others)
  await healthyOrStopped(
    others.map(({ port, child }) => ({ origin: origin(port), child })),
    children,
  ).catch(async (error: unknown) => {
    await closeIngress()
    throw error
  })
  return {
    base,
    processes: [
      { name: 'management', pid: management.pid as number, origin: origin(managementPort) },
      ...others.map(({ name, port, child }) => ({ name, pid: child.pid as number, origin: origin(port) })),
    ],
    rootClient,
    async stop() {
      await stopAll(children)
      await closeIngress()
    },
  }
}
