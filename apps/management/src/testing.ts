import { randomBytes } from 'node:crypto'
import { cpSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { createServer as createNetServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { deriveManagementSigningKey } from '@credential-service/crypto'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { TEST_MASTER_SECRET, type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { createKeyRuntime, createServer, type ServerOptions } from '@credential-service/server-kit'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import {
  bootstrapRootClient,
  buildManagementApp,
  importAtStartup,
  type ManagementDeps,
  parseManagementConfig,
} from './app'
import type { ManagementConfig } from './config'

/**
 * Test worlds (issue 21): `test/worlds/<name>/` is a folder in the config-import layout
 * (`<tenant>/<kind>/<id>.json`, DESIGN.md "Configuration import") with two tenant folders, `a`
 * and `b`. Each test file imports its own copy, under random tenant and client ids, so files
 * share a PostgreSQL database and run in parallel.
 */
export const WORLDS_DIR = fileURLToPath(new URL('../../../test/worlds/', import.meta.url))

/** The placeholder every world's client files take their secret from. */
const CLIENT_SECRET_VARIABLE = 'WORLD_CLIENT_SECRET'

type Headers = Record<string, string>

export interface WorldTenant {
  /** The tenant id of this copy of the folder: the folder name and a random suffix. */
  id: string
  /** The imported clients by file name (`admin` for `clients/admin.json`). */
  clients: Record<string, { clientId: string; clientSecret: string }>
  /** Ids of the imported key chains, credential and presentation configurations. */
  keyChains: string[]
  credentials: string[]
  presentations: string[]
}

/** A world's copy, ready for CONFIG_IMPORT_DIR: the folder, its placeholder values, its tenants. */
export interface WorldCopy {
  name: string
  dir: string
  /** Values of the placeholders the files use (`${WORLD_CLIENT_SECRET}`), plus the caller's. */
  env: Record<string, string>
  tenants: { a: WorldTenant; b: WorldTenant }
  remove(): void
}

const random = () => randomBytes(4).toString('hex')
const idsIn = (dir: string) => {
  try {
    return readdirSync(dir)
      .filter((file) => file.endsWith('.json'))
      .map((file) => file.slice(0, -5))
      .sort()
  } catch {
    return []
  }
}

/**
 * Copies `test/worlds/<name>` to a temporary folder: tenant folder `a` becomes `a-<random>`, and a
 * client file `admin.json` of it `<tenant id>-admin.json` (a client id is unique across tenants).
 * `env` adds placeholder values (an attribute provider's URL, say).
 */
export function copyWorld(name: string, env: Record<string, string> = {}): WorldCopy {
  const dir = mkdtempSync(join(tmpdir(), `world-${name}-`))
  const clientSecret = randomBytes(24).toString('base64url')
  const copy = (folder: 'a' | 'b'): WorldTenant => {
    const id = `${folder}-${random()}`
    cpSync(join(WORLDS_DIR, name, folder), join(dir, id), { recursive: true })
    const clients: WorldTenant['clients'] = {}
    for (const client of idsIn(join(dir, id, 'clients'))) {
      const clientId = `${id}-${client}`
      renameSync(join(dir, id, 'clients', `${client}.json`), join(dir, id, 'clients', `${clientId}.json`))
      clients[client] = { clientId, clientSecret }
    }
    return {
      id,
      clients,
      keyChains: idsIn(join(dir, id, 'key-chains')),
      credentials: idsIn(join(dir, id, 'credentials')),
      presentations: idsIn(join(dir, id, 'presentations')),
    }
  }
  return {
    name,
    dir,
    env: { [CLIENT_SECRET_VARIABLE]: clientSecret, ...env },
    tenants: { a: copy('a'), b: copy('b') },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}

/** A world tenant signed in: the Authorization header of its `admin` client and its protocol URLs. */
export interface WorldTenantHandle extends WorldTenant {
  /** The Authorization header of the `admin` client (a management token). */
  auth: Headers
  /** The `admin` client's id. */
  clientId: string
  /** The credential issuer identifier, `<PUBLIC_URL>/issuers/<id>`. */
  issuer: string
  /** The verifier's base, `<PUBLIC_URL>/verifiers/<id>`. */
  verifier: string
}

/** The Authorization header of a client, from the management token endpoint of `app`. */
export async function bearer(
  app: FastifyInstance,
  clientId: string,
  clientSecret: string,
): Promise<{ authorization: string }> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/oauth2/token',
    payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
  })
  if (response.statusCode !== 200)
    throw new Error(`token of ${clientId}: ${response.statusCode} ${response.body}`)
  return { authorization: `Bearer ${response.json().access_token as string}` }
}

/** The tenants of an imported world with a token of each one's `admin` client. */
export async function signIn(
  management: FastifyInstance,
  world: WorldCopy,
  publicUrl: string,
): Promise<{ a: WorldTenantHandle; b: WorldTenantHandle }> {
  const handle = async (tenant: WorldTenant): Promise<WorldTenantHandle> => {
    const admin = tenant.clients.admin
    if (!admin) throw new Error(`world ${world.name}: tenant ${tenant.id} has no clients/admin.json`)
    return {
      ...tenant,
      auth: await bearer(management, admin.clientId, admin.clientSecret),
      clientId: admin.clientId,
      issuer: `${publicUrl}/issuers/${tenant.id}`,
      verifier: `${publicUrl}/verifiers/${tenant.id}`,
    }
  }
  return { a: await handle(world.tenants.a), b: await handle(world.tenants.b) }
}

/**
 * A port nobody listens on now, chosen by the kernel, so PUBLIC_URL can name the address the
 * service will listen on. A random pick in 40000–60000 collided with other suites' listeners and
 * with the kernel's own outgoing (ephemeral) ports on a loaded CI machine (EADDRINUSE).
 */
export async function freePort(): Promise<number> {
  const server = createNetServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * The database a world runs on when the file names none: PostgreSQL on TEST_DATABASE_URL when it
 * is set, the embedded PGlite otherwise. Both apply the real migrations.
 */
export function worldDatabase(): TestDatabase {
  const databases = testDatabases()
  return databases[databases.length - 1] as TestDatabase
}

/** What the app(s) under test are built from: the process's configuration and database. */
export interface WorldAppDeps {
  config: ManagementConfig
  database: DatabaseHandle
  now?: () => Date
}

export interface WorldOptions {
  testDatabase?: TestDatabase
  /** The apps under test, served by their own server; the management API alone when absent. */
  apps?: (deps: WorldAppDeps) => FastifyPluginAsync[]
  /** Configuration variables and placeholder values on top of the test configuration. */
  env?: Record<string, string>
  /** Listen on a free loopback port (PUBLIC_URL is then its address); inject only when absent. */
  listen?: boolean
  now?: () => Date
}

export interface World {
  name: string
  publicUrl: string
  /** The server of the apps under test (the management server when no apps were given). */
  app: FastifyInstance
  /** The management API on the same database, as its own server (another pod in production). */
  management: FastifyInstance
  database: DatabaseHandle
  config: ManagementConfig
  /** The Authorization header of the operator (root) client. */
  root: Headers
  tenants: { a: WorldTenantHandle; b: WorldTenantHandle }
  close(): Promise<void>
}

/** The management API alone on a server, as its pod runs it (silent unless `log` says otherwise). */
export async function managementServer(
  deps: Omit<ManagementDeps, 'signingKey'> & { database: DatabaseHandle },
  log: Pick<ServerOptions, 'logLevel' | 'logStream'> = { logLevel: 'silent' },
): Promise<FastifyInstance> {
  return createServer({
    ...log,
    ping: deps.database.ping,
    apps: [
      buildManagementApp({
        ...deps,
        signingKey: await deriveManagementSigningKey(deps.config.MASTER_SECRET),
      }),
    ],
  })
}

/**
 * Starts a test file's world: opens the database (migrated), imports a copy of
 * `test/worlds/<name>` as a deployment's CONFIG_IMPORT_DIR would, starts the management API and
 * the apps under test once, and signs in each tenant's `admin` client. Call it in `beforeAll`.
 */
export async function startWorld(name: string, options: WorldOptions = {}): Promise<World> {
  const world = copyWorld(name, options.env)
  const database = await (options.testDatabase ?? worldDatabase()).open()
  const port = options.listen ? await freePort() : undefined
  const publicUrl = port ? `http://127.0.0.1:${port}` : 'https://credentials.test'
  const config = parseManagementConfig({
    PUBLIC_URL: publicUrl,
    MASTER_SECRET: TEST_MASTER_SECRET,
    AUTH_CLIENT_ID: `root-${random()}`,
    AUTH_CLIENT_SECRET: randomBytes(24).toString('base64url'),
    CONFIG_IMPORT_DIR: world.dir,
    // Suites send many requests from one address; the rate-limit suites set their own limits.
    RATE_LIMIT_WALLET_PER_MINUTE: '100000',
    RATE_LIMIT_TOKEN_PER_MINUTE: '100000',
    KEY_ROTATION_CHECK_SECONDS: '0',
    // Files share a PostgreSQL database: an app does not poll for other files' webhook rows.
    WEBHOOK_POLL_SECONDS: '3600',
    ...options.env,
  })
  const servers: FastifyInstance[] = []
  try {
    await bootstrapRootClient(database.db, config)
    const keys = createKeyRuntime({ config, db: database.db, ...(options.now ? { now: options.now } : {}) })
    await importAtStartup(config, database.db, keys, world.env)
    const management = await managementServer({
      config,
      database,
      keys,
      sessionRetentionSeconds: 0,
      ...(options.now ? { now: options.now } : {}),
    })
    servers.push(management)
    const deps = { config, database, ...(options.now ? { now: options.now } : {}) }
    const app = options.apps
      ? await createServer({ logLevel: 'silent', ping: database.ping, apps: options.apps(deps) })
      : management
    if (app !== management) servers.push(app)
    await Promise.all(servers.map((server) => server.ready()))
    if (port) await app.listen({ host: '127.0.0.1', port })
    const root = await bearer(
      management,
      config.AUTH_CLIENT_ID as string,
      config.AUTH_CLIENT_SECRET as string,
    )
    return {
      name,
      publicUrl,
      app,
      management,
      database,
      config,
      root,
      tenants: await signIn(management, world, publicUrl),
      async close() {
        for (const server of servers) await server.close()
        await database.close()
        world.remove()
      },
    }
  } catch (error) {
    for (const server of servers) await server.close()
    await database.close()
    world.remove()
    throw error
  }
}
