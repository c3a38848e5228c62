import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { TEST_MASTER_SECRET } from '@credential-service/db-schema/testing'
import postgres from 'postgres'
import { appEntry } from '../../../scripts/test-bundles'
import { freePort } from './free-port'

const root = new URL('../../..', import.meta.url).pathname

export interface ServiceProcess {
  app: string
  origin: string
  /** Polls `/readyz` until it answers 200 or the process exits; the last status (0: no answer). */
  ready(): Promise<number>
  exitCode(): number | null
  /** What the process wrote to stderr, for assertion messages. */
  stderr(): string
  /** What it wrote to stdout (its log lines), when started with `captureStdout`. */
  stdout(): string
  stop(): Promise<void>
}

/**
 * Starts an app as its own process (its bundle, scripts/test-bundles.ts), as standalone.test.ts
 * does, with a small pool: the local PostgreSQL's connections are shared by every suite.
 */
export async function startProcess(
  app: string,
  env: Record<string, string>,
  options: {
    /** Node flags before the entry point. */ nodeArgs?: string[]
    /** Keep stdout (the log lines) for `stdout()`; ignored otherwise. */ captureStdout?: boolean
    /** Another Node binary than the one running the tests. */ node?: string
  } = {},
): Promise<ServiceProcess> {
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  const args = [...(options.nodeArgs ?? []), ...appEntry(app)]
  const child: ChildProcess = spawn(options.node ?? process.execPath, args, {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      PUBLIC_URL: origin,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'error',
      DATABASE_POOL_SIZE: '2',
      KEY_ROTATION_CHECK_SECONDS: '0',
      ...env,
    },
    stdio: ['ignore', options.captureStdout ? 'pipe' : 'ignore', 'pipe'],
  })
  let stderr = ''
  let stdout = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  return {
    app,
    origin,
    async ready() {
      let status = 0
      for (let attempt = 0; attempt < 1000 && status !== 200 && child.exitCode === null; attempt++) {
        status = (await fetch(`${origin}/readyz`).catch(() => undefined))?.status ?? 0
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100))
      }
      return status
    },
    exitCode: () => child.exitCode,
    stderr: () => stderr,
    stdout: () => stdout,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

export interface FreshDatabase {
  url: string
  drop(): Promise<void>
}

/** A new, empty database next to TEST_DATABASE_URL's (its user must be allowed to create one). */
export async function freshDatabase(): Promise<FreshDatabase> {
  const base = new URL(process.env.TEST_DATABASE_URL as string)
  const name = `cs_fresh_${randomBytes(6).toString('hex')}`
  const admin = postgres(base.href, { max: 1, onnotice: () => {} })
  try {
    await admin.unsafe(`create database ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(base.href)
  url.pathname = `/${name}`
  return {
    url: url.href,
    async drop() {
      const sql = postgres(base.href, { max: 1, onnotice: () => {} })
      try {
        await sql.unsafe(`drop database if exists ${name} with (force)`)
      } finally {
        await sql.end()
      }
    },
  }
}

/** One app of a deployment, with the variables it has beyond the deployment's. */
export type DeploymentApp = string | { app: string; env: Record<string, string> }

/**
 * Processes of one deployment on the PostgreSQL database at `databaseUrl`, as pods behind one
 * ingress: the suites' MASTER_SECRET, the operator `root`, no webhook polling (suites share the
 * database and would send each other's rows), and `env`. Started together; resolves once every
 * one is ready, and fails naming the one that is not (with its stderr), stopping them all.
 */
export async function startDeployment(
  databaseUrl: string,
  root: { id: string; secret: string },
  apps: readonly DeploymentApp[],
  env: Record<string, string> = {},
): Promise<ServiceProcess[]> {
  const common = {
    DATABASE_URL: databaseUrl,
    MASTER_SECRET: TEST_MASTER_SECRET,
    AUTH_CLIENT_ID: root.id,
    AUTH_CLIENT_SECRET: root.secret,
    WEBHOOK_POLL_SECONDS: '3600',
    ...env,
  }
  const processes = await Promise.all(
    apps.map((entry) =>
      typeof entry === 'string'
        ? startProcess(entry, common)
        : startProcess(entry.app, { ...common, ...entry.env }),
    ),
  )
  const ready = await Promise.all(processes.map((p) => p.ready()))
  const failed = processes.findIndex((_, n) => ready[n] !== 200)
  if (failed >= 0) {
    const p = processes[failed] as ServiceProcess
    await Promise.all(processes.map((other) => other.stop()))
    throw new Error(`${p.app} did not become ready (${ready[failed]}): ${p.stderr()}`)
  }
  return processes
}

/** The token endpoint's answer to a client's client-credentials request, from a running process. */
export function requestClientToken(
  origin: string,
  clientId: string,
  clientSecret: string,
): Promise<Response> {
  return fetch(`${origin}/api/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    }),
  })
}

/** A management access token of a client (client credentials) from a running process. */
export async function clientToken(origin: string, clientId: string, clientSecret: string): Promise<string> {
  const response = await requestClientToken(origin, clientId, clientSecret)
  const body = (await response.json()) as { access_token?: string }
  if (!body.access_token) throw new Error(`token for ${clientId}: ${response.status} ${JSON.stringify(body)}`)
  return body.access_token
}

/** POSTs to the management API with a bearer token: the created resource; anything but 201 throws with the answer. */
export function managementPoster(managementOrigin: string, token: string) {
  return async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${managementOrigin}/api${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    })
    const text = await response.text()
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${text}`)
    return text ? (JSON.parse(text) as Record<string, unknown>) : {}
  }
}

/**
 * The operator `root` creates `tenant` and a client of it holding `roles`, as a process suite's
 * set-up does: that client's token, its bearer header and a poster for its management calls.
 */
export async function tenantAdmin(
  managementOrigin: string,
  root: { id: string; secret: string },
  tenant: string,
  roles: string[],
) {
  const operator = managementPoster(
    managementOrigin,
    await clientToken(managementOrigin, root.id, root.secret),
  )
  await operator('/tenants', { id: tenant, name: tenant })
  const admin = { clientId: `${tenant}-admin`, clientSecret: randomBytes(24).toString('base64url') }
  await operator(`/tenants/${tenant}/clients`, { ...admin, roles })
  const token = await clientToken(managementOrigin, admin.clientId, admin.clientSecret)
  return {
    token,
    auth: { authorization: `Bearer ${token}` },
    post: managementPoster(managementOrigin, token),
  }
}
