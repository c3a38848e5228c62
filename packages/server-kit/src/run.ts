import { relayChange, TENANT_CHANGES_CHANNEL } from '@credential-service/db-schema'
import { createDatabase, type DatabaseHandle } from '@credential-service/db-schema/client'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import type { z } from 'zod'
import { createServer } from './create-server'
import { DatabaseStartupError, migrateAtStart } from './database-startup'
import { guardDeadConnectionErrors } from './dead-connection-guard'
import { ConfigError, type zCommonEnv } from './env'
import { httpLimits } from './http-limits'
import { providersOf, verifyKeyProviders, verifyMasterSecret } from './key-runtime'
import { logStreamFor } from './log-format'
import { onShutdownSignal } from './shutdown'
import { startTelemetry, telemetryStartLine, warnOnExportFailures } from './telemetry'

type CommonConfig = Readonly<z.output<typeof zCommonEnv>>

export interface RunOptions<C extends CommonConfig> {
  name: string
  parseConfig: (env: Record<string, string | undefined>) => C
  /** Whether the process may fall back to embedded PGlite (all-in-one mode only). */
  allowEmbeddedDatabase: boolean
  /** Returns the app plugins to mount, after the database is migrated. */
  build: (
    config: C,
    database: DatabaseHandle,
    env: Record<string, string | undefined>,
  ) => Promise<FastifyPluginAsync[]>
  /** Runs once the server listens (e.g. to print the root client). */
  onListening?: (config: C, server: FastifyInstance) => void | Promise<void>
}

/**
 * A process entry point: parse the environment once, open and migrate the database, mount the
 * apps, listen, and drain and close gracefully on SIGTERM/SIGINT (exit 0, see shutdown.ts). Configuration errors exit with status 1
 * and a message naming each variable.
 */
export async function runProcess<C extends CommonConfig>(options: RunOptions<C>): Promise<void> {
  const exitOnConfigError = async (error: unknown, cleanUp?: () => Promise<void>): Promise<never> => {
    if (!(error instanceof ConfigError)) throw error
    console.error(`${options.name}: ${error.message}`)
    await cleanUp?.()
    process.exit(1)
  }
  let config: C
  try {
    config = options.parseConfig(process.env)
    if (!options.allowEmbeddedDatabase && !config.DATABASE_URL) {
      throw new ConfigError([
        `DATABASE_URL is required by the standalone ${options.name} app (the embedded database is for all-in-one mode only)`,
      ])
    }
  } catch (error) {
    return exitOnConfigError(error)
  }

  // Before anything that traces: off (no OTLP endpoint), nothing is loaded.
  const telemetry = await startTelemetry(config, `credential-service-${options.name}`)
  const database = await createDatabase({
    url: config.DATABASE_URL,
    dataDir: config.PGLITE_DATA_DIR,
    maxConnections: config.DATABASE_POOL_SIZE,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
  })
  try {
    await (config.DATABASE_URL
      ? migrateAtStart({
          name: options.name,
          url: config.DATABASE_URL,
          migrate: database.migrate,
          timeoutSeconds: config.DATABASE_STARTUP_TIMEOUT_SECONDS,
          log: (line) => console.error(line),
        })
      : database.migrate())
  } catch (error) {
    if (!(error instanceof DatabaseStartupError)) throw error
    console.error(`${options.name}: ${error.message}`)
    await database.close()
    process.exit(1)
  }
  let apps: FastifyPluginAsync[]
  try {
    await verifyMasterSecret(database.db, config.MASTER_SECRET)
    for (const warning of await verifyKeyProviders(database.db, providersOf(config))) {
      console.error(`${options.name}: warning: ${warning}`)
    }
    apps = await options.build(config, database, process.env)
  } catch (error) {
    return exitOnConfigError(error, () => database.close())
  }
  // Changes committed by other processes (management, other pods) reach this process's caches.
  const unlisten = await database.listen(TENANT_CHANGES_CHANNEL, relayChange)
  const server = await createServer({
    logLevel: config.LOG_LEVEL,
    ping: database.ping,
    apps,
    limits: httpLimits(config),
    trustProxy: config.TRUST_PROXY,
    logStream: await logStreamFor(config.LOG_FORMAT),
    corsOrigins: config.CORS_ORIGINS,
  })
  guardDeadConnectionErrors(server.log)
  server.log.info(telemetryStartLine(config), telemetry ? 'tracing on' : 'tracing off')
  if (telemetry) await warnOnExportFailures(server.log)
  server.addHook('onClose', async () => {
    await unlisten()
    await database.close()
    // Flushes the spans and metrics still buffered.
    await telemetry?.shutdown()
  })

  onShutdownSignal(server, config.SHUTDOWN_DRAIN_SECONDS * 1000)
  await server.listen({ host: config.HOST, port: config.PORT })
  await options.onListening?.(config, server)
}
