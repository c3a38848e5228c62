import { newId } from '@credential-service/core-domain'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify'
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod'
import { oauthErrorHandler, PROBLEM_CONTENT_TYPE, problemErrorHandler } from './error-handlers'
import { problem } from './problem'
import { SERVICE_VERSION } from './version'

export interface ServerOptions {
  logLevel: string
  /** Reports whether the database answers; used by `GET /readyz` (never by `GET /healthz`). */
  ping: () => Promise<boolean>
  /** App plugins to mount on this origin (one in a standalone app, three in all-in-one mode). */
  apps: FastifyPluginAsync[]
  /** Largest accepted request body. */
  bodyLimit?: number
  /** Where log lines go; stdout when absent (tests capture them here). */
  logStream?: { write(line: string): void }
}

/** Fields that must never reach a log line. */
export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'client_secret',
  'clientSecret',
  'body.client_secret',
  'body.clientSecret',
  '*.client_secret',
  '*.clientSecret',
  '*.secretHash',
  '*.privateJwk',
  '*.d',
]

export const DEFAULT_BODY_LIMIT = 256 * 1024

/**
 * The Fastify root shared by every process: logging, ids, zod validation, the version header,
 * `GET /`, `GET /healthz`, `GET /readyz`, and error and not-found rendering by path (`/api` problem+json,
 * everything else OAuth-style JSON). Apps add their routes as plugins.
 */
export async function createServer(options: ServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: options.logLevel,
      redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' },
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    genReqId: () => newId('req', 16),
    childLoggerFactory: lazyRequestLogger,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    trustProxy: true,
  })
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)

  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('x-service-version', SERVICE_VERSION)
    done()
  })

  app.setErrorHandler((error, request, reply) =>
    request.url.startsWith('/api')
      ? problemErrorHandler(error, request, reply)
      : oauthErrorHandler(error, request, reply),
  )
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url
    if (path.startsWith('/api')) {
      const body = problem('route_not_found', `no route ${request.method} ${path}`, { instance: path })
      return reply.status(404).type(PROBLEM_CONTENT_TYPE).send(body)
    }
    return reply
      .status(404)
      .send({ error: 'not_found', error_description: `no route ${request.method} ${path}` })
  })

  // Spec §9.1: `GET /` names the service but carries no version.
  app.get('/', { schema: { hide: true } }, async () => ({ name: 'credential-service' }))
  // Probes for orchestrators. Liveness (`/healthz`) never touches the database: a database outage
  // must take pods out of rotation (readiness, `/readyz`), not restart every pod at once.
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const up = await options.ping()
    return reply.status(up ? 200 : 503).send({ status: up ? 'ok' : 'unavailable' })
  })

  for (const plugin of options.apps) await app.register(plugin)
  return app
}

// pino's level values; `silent` (absent here) logs nothing.
const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 }
const noop = () => {}

/**
 * The request logger, bound to the request id only once something is logged: at the production
 * levels (warn, error) most requests log nothing, and a pino child with redaction costs more CPU
 * than routing the request. Log calls below the level are no-ops, as on pino itself.
 */
function lazyRequestLogger(
  logger: FastifyBaseLogger,
  bindings: Record<string, unknown>,
  options: Parameters<FastifyBaseLogger['child']>[1],
): FastifyBaseLogger {
  const threshold = LEVELS[logger.level] ?? Number.POSITIVE_INFINITY
  if (threshold <= (LEVELS.info as number)) return logger.child(bindings, options)
  let child: FastifyBaseLogger | undefined
  const bound = () => {
    child ??= logger.child(bindings, options)
    return child
  }
  // Fastify checks the logger's methods on every request: answer from the parent and create the
  // child only when one is called.
  return new Proxy(logger, {
    get(target, property) {
      const rank = typeof property === 'string' ? LEVELS[property] : undefined
      if (rank !== undefined && rank < threshold) return noop
      const value = Reflect.get(child ?? target, property)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => Reflect.apply(Reflect.get(bound(), property), bound(), args)
    },
  })
}
