import { createServer as createHttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type WebhookEvent, zWebhookEvent } from '@credential-service/core-domain'
import { createDatabase, type DatabaseHandle } from '@credential-service/db-schema/client'
import { TEST_MASTER_SECRET, type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { parseManagementConfig } from '@credential-service/management'
import { bearer, copyWorld, signIn } from '@credential-service/management/testing'
import { createServer, httpLimits } from '@credential-service/server-kit'
import type { FastifyInstance } from 'fastify'
import { composeApps } from '../src/compose'
import { freePort } from './free-port'

export interface AllInOne {
  app: FastifyInstance
  database: DatabaseHandle
  rootClientId: string
  rootSecret: string
}

/**
 * Suites send many requests from one address within a minute: limits far above the defaults, so
 * that only the rate-limit suite (which sets its own) is ever throttled.
 */
export const TEST_RATE_LIMITS = {
  RATE_LIMIT_WALLET_PER_MINUTE: '100000',
  RATE_LIMIT_TOKEN_PER_MINUTE: '100000',
}

/** The all-in-one composition on a test database, with a fresh root client. */
export async function startAllInOne(
  testDatabase: TestDatabase,
  publicUrl = 'http://localhost:3000',
  env: Record<string, string> = {},
  now?: () => Date,
  /** Captures every log line at trace level; silent when absent. */
  logLines?: string[],
): Promise<AllInOne> {
  const database = await testDatabase.open()
  const rootClientId = `root-${crypto.randomUUID()}`
  const rootSecret = `secret-${crypto.randomUUID()}`
  const config = parseManagementConfig({
    PUBLIC_URL: publicUrl,
    MASTER_SECRET: TEST_MASTER_SECRET,
    AUTH_CLIENT_ID: rootClientId,
    AUTH_CLIENT_SECRET: rootSecret,
    ...TEST_RATE_LIMITS,
    // Suites share a PostgreSQL database: an app sends its own events on kicks and retry timers,
    // and does not poll for other suites' rows (whose receivers its outbound policy may refuse).
    WEBHOOK_POLL_SECONDS: '3600',
    ...env,
  })
  const apps = await composeApps(config, database, env, now).catch(async (error: unknown) => {
    await database.close()
    throw error
  })
  const app = await createServer({
    logLevel: logLines ? 'trace' : 'silent',
    ...(logLines ? { logStream: { write: (line: string) => void logLines.push(line) } } : {}),
    ping: database.ping,
    apps,
    limits: httpLimits(config),
  })
  app.addHook('onClose', () => database.close())
  return { app, database, rootClientId, rootSecret }
}

/**
 * The all-in-one composition over a test world (test/worlds/<name>): a copy of the folder under
 * random tenant ids is imported at start-up, as CONFIG_IMPORT_DIR is in a deployment; tenants `a`
 * and `b` come signed in (their `admin` client's Authorization header), with the root's.
 */
export async function startAllInOneWorld(
  testDatabase: TestDatabase,
  name: string,
  publicUrl = 'http://localhost:3000',
  env: Record<string, string> = {},
  now?: () => Date,
  /** Captures every log line at trace level; silent when absent. */
  logLines?: string[],
) {
  const world = copyWorld(name)
  const started = await startAllInOne(
    testDatabase,
    publicUrl,
    { ...world.env, ...env, CONFIG_IMPORT_DIR: world.dir },
    now,
    logLines,
  ).catch((error: unknown) => {
    world.remove()
    throw error
  })
  started.app.addHook('onClose', () => world.remove())
  return {
    ...started,
    root: await bearer(started.app, started.rootClientId, started.rootSecret),
    tenants: await signIn(started.app, world, publicUrl),
  }
}

/**
 * A world's all-in-one listening on a free port of localhost (IPv4 and IPv6), PUBLIC_URL that
 * address, on the last test database: for suites whose wallets talk real HTTP to it.
 */
export async function listenAllInOneWorld(name: string, env: Record<string, string> = {}) {
  const port = await freePort()
  const baseUrl = `http://localhost:${port}`
  const started = await startAllInOneWorld(testDatabases().at(-1) as TestDatabase, name, baseUrl, env)
  await started.app.listen({ host: '::', port })
  return { ...started, baseUrl }
}

/**
 * A JSON client of `/api` with a client's Authorization header: status and the parsed answer. Both
 * are read at each call (suites learn them in beforeAll).
 */
export function apiClient(baseUrl: () => string, auth: () => Record<string, string>) {
  return async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...auth() },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    // biome-ignore lint/suspicious/noExplicitAny: suites read loosely typed JSON answers
    return { status: response.status, body: (await response.json()) as any }
  }
}

// The Authorization header of a client: the worlds' helper, for the suites that seed by hand too.
export { bearer }

/**
 * A new tenant and a client of it with `roles`: the Authorization headers of the root client and of
 * that client (the tenant's administrator in a test).
 */
export async function tenantAdmin(
  app: FastifyInstance,
  started: Pick<AllInOne, 'rootClientId' | 'rootSecret'>,
  tenantId: string,
  roles: string[],
) {
  const root = await bearer(app, started.rootClientId, started.rootSecret)
  const created = await app.inject({
    method: 'POST',
    url: '/api/tenants',
    headers: root,
    payload: { id: tenantId, name: tenantId },
  })
  if (created.statusCode !== 201) throw new Error(`tenant: ${created.statusCode} ${created.body}`)
  const client = await app.inject({
    method: 'POST',
    url: `/api/tenants/${tenantId}/clients`,
    headers: root,
    payload: { roles },
  })
  if (client.statusCode !== 201) throw new Error(`client: ${client.statusCode} ${client.body}`)
  const { clientId, clientSecret } = client.json()
  return { root, admin: await bearer(app, clientId, clientSecret) }
}

export interface ReceivedCall {
  headers: Record<string, string>
  body: string
}

/**
 * The body of a webhook call as the outbox sent it, checked against `zWebhookEvent` (issue 21):
 * it parses, and nothing is dropped in parsing, so the schemas name every field that is sent.
 */
export function webhookEvent(call: ReceivedCall | undefined): WebhookEvent {
  const body: unknown = JSON.parse(call?.body ?? 'null')
  const event = zWebhookEvent.parse(body)
  if (JSON.stringify(sortedKeys(event)) !== JSON.stringify(sortedKeys(body)))
    throw new Error(`the webhook body has fields its schema does not name: ${call?.body}`)
  return event
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys)
  if (!value || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]),
  )
}

/**
 * A local HTTP endpoint that records every request (a webhook receiver); `status` answers the n-th
 * call (1-based), 204 by default, `delayMs` after the body arrived.
 */
export async function startReceiver(status: (call: number) => number = () => 204, delayMs = 0) {
  const received: ReceivedCall[] = []
  const server = createHttpServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => {
      body += chunk
    })
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body })
      const code = status(received.length)
      setTimeout(() => res.writeHead(code).end(), delayMs)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { received, url: `http://127.0.0.1:${port}`, close: () => server.close() }
}

/**
 * The all-in-one composition on the PostgreSQL database at `url` (a pool of 2, a 2 s connect
 * deadline, every log line in `logLines`), with a tenant: for suites that take the database away.
 * `management` and `protocol` are a route of each error shape that reads the database.
 */
export async function startOnDatabase(url: string, logLines: string[]) {
  const open = async () => {
    const database = await createDatabase({ url, maxConnections: 2, connectTimeoutMs: 2000 })
    await database.migrate()
    return database
  }
  const started = await startAllInOne({ name: 'postgres', open }, undefined, {}, undefined, logLines)
  const { app } = started
  const tenant = `outage-${crypto.randomUUID().slice(0, 8)}`
  const { root: auth } = await tenantAdmin(app, started, tenant, ['issuance:offer'])
  return {
    app,
    management: () => app.inject({ method: 'GET', url: '/api/tenants', headers: auth }),
    protocol: () =>
      app.inject({
        method: 'POST',
        url: `/issuers/${tenant}/token`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload:
          'grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Apre-authorized_code&pre-authorized_code=x',
      }),
  }
}
