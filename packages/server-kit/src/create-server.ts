import { DATABASE_RETRY_AFTER_SECONDS, newId } from '@credential-service/core-domain'
import { tracingOn } from '@credential-service/core-domain/tracing'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify'
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod'
import { RETRY_ELSEWHERE_SECONDS, registerDrain } from './drain'
import {
  oauthDescription,
  oauthErrorHandler,
  PROBLEM_CONTENT_TYPE,
  problemErrorHandler,
  routerErrorHandler,
} from './error-handlers'
import { clientErrorHandler, DEFAULT_HTTP_LIMITS, type HttpLimits, registerHttpLimits } from './http-limits'
import { registerInputGuard } from './input-guard'
import { REDACTED, serializeError, serializeRequest } from './log-serializers'
import { problem } from './problem'
import { registerRequestTracing, traceLogMixin } from './request-tracing'
import { SERVICE_VERSION } from './version'

export interface ServerOptions {
  logLevel: string
  /** Reports whether the database answers, within 1 s; used by `GET /readyz`. */
  ping: () => Promise<boolean>
  /** App plugins to mount on this origin (one in a standalone app, three in all-in-one mode). */
  apps: FastifyPluginAsync[]
  /** Request size limits (body, headers, URI); {@link DEFAULT_HTTP_LIMITS} when absent. */
  limits?: HttpLimits
  /**
   * Proxies whose `X-Forwarded-For` is believed for `request.ip` (TRUST_PROXY); default: those on
   * loopback and private networks. Believing every hop would let a client pick its IP and slip
   * past the rate limits.
   */
  trustProxy?: boolean | string[]
  /** Where log lines go; stdout when absent (tests capture them here). */
  logStream?: { write(line: string): void }
  /** Browser origins allowed across origins (CORS_ORIGINS); none when absent or empty. */
  corsOrigins?: string[]
}

/**
 * What a browser app may send and read across origins: the OAuth, DPoP and attestation headers of
 * the wallet-facing endpoints, and the answers' nonce, challenge, retry and correlation headers.
 */
const CORS = {
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
  allowedHeaders: [
    'Authorization',
    'Content-Type',
    'DPoP',
    'OAuth-Client-Attestation',
    'OAuth-Client-Attestation-PoP',
    'X-Request-Id',
    'Last-Event-ID',
  ],
  exposedHeaders: [
    'DPoP-Nonce',
    'WWW-Authenticate',
    'Retry-After',
    'Location',
    'X-Request-Id',
    'X-Service-Version',
    // Which key chain a credential configuration without `keyChainId` got (management API).
    'X-Default-Key-Chain',
  ],
  maxAge: 600,
}

// Secrets of the configuration, should a config object ever be logged.
const CONFIG_SECRETS = [
  'MASTER_SECRET',
  'AUTH_CLIENT_SECRET',
  'OIDC_CLIENT_SECRET',
  'VAULT_TOKEN',
  'PKCS11_PIN',
  'AZURE_CLIENT_SECRET',
  'GCP_KMS_CREDENTIALS',
  'DATABASE_URL',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'OTEL_EXPORTER_OTLP_METRICS_HEADERS',
]

/** Fields that must never reach a log line. */
export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  ...CONFIG_SECRETS.flatMap((name) => [name, `*.${name}`]),
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

const DEFAULT_TRUSTED_PROXIES = ['loopback', 'linklocal', 'uniquelocal']

/**
 * The Fastify root shared by every process: logging, ids, zod validation, the version header,
 * `GET /`, `GET /healthz`, `GET /readyz`, request limits and the input guard, and error and
 * not-found rendering by path (`/api` problem+json, everything else OAuth-style JSON). Apps add
 * their routes as plugins.
 */
export async function createServer(options: ServerOptions): Promise<FastifyInstance> {
  const limits = options.limits ?? DEFAULT_HTTP_LIMITS
  const app = Fastify({
    logger: {
      level: options.logLevel,
      redact: { paths: LOG_REDACT_PATHS, censor: REDACTED },
      // URLs carry capabilities and query secrets; errors of failed statements carry their values.
      serializers: { req: serializeRequest, err: serializeError },
      // Trace and span ids on each line, only when a tracing SDK runs (OTEL_EXPORTER_OTLP_ENDPOINT).
      ...(tracingOn() ? { mixin: traceLogMixin } : {}),
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    requestIdHeader: false,
    genReqId: requestId,
    childLoggerFactory: lazyRequestLogger,
    bodyLimit: limits.bodyBytes,
    http: { maxHeaderSize: limits.headerBytes },
    clientErrorHandler: clientErrorHandler(limits),
    // registerHttpLimits answers 503 while closing, in the shape of the route.
    return503OnClosing: false,
    trustProxy: options.trustProxy ?? DEFAULT_TRUSTED_PROXIES,
    frameworkErrors: routerErrorHandler,
  })
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)

  // First, so that every later hook runs in the request's span; nothing when tracing is off.
  registerRequestTracing(app)
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-service-version', SERVICE_VERSION)
    reply.header('x-request-id', request.id)
    done()
  })
  if (options.corsOrigins?.length) {
    const { default: cors } = await import('@fastify/cors')
    // Exact origins only; no credentials (tokens travel in Authorization, never in cookies).
    await app.register(cors, { origin: options.corsOrigins, ...CORS })
  }
  registerDrain(app)
  registerHttpLimits(app, limits)
  registerInputGuard(app)

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
      .send({ error: 'not_found', error_description: oauthDescription(`no route ${request.method} ${path}`) })
  })

  // Spec §9.1: `GET /` names the service but carries no version.
  app.get('/', { schema: { hide: true } }, async () => ({ name: 'credential-service' }))
  // Probes for orchestrators; not routed by the ingress. Liveness never asks the database: a
  // database outage must not get every pod restarted, and the pods recover on their own.
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }))
  // Readiness: whether this process can serve, i.e. the database answers (within 1 s) and the
  // process is not draining before a shutdown. Every 503 says when to come back.
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    if (app.draining) {
      return reply.status(503).header('retry-after', RETRY_ELSEWHERE_SECONDS).send({ status: 'draining' })
    }
    const up = await options.ping()
    if (!up) reply.header('retry-after', DATABASE_RETRY_AFTER_SECONDS)
    return reply.status(up ? 200 : 503).send({ status: up ? 'ok' : 'unavailable' })
  })

  for (const plugin of options.apps) await app.register(plugin)
  return app
}

// What a caller's X-Request-Id may look like (a UUID, a trace id, an ingress id): anything else
// is replaced, so a header can neither forge log structure nor grow log lines.
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The caller's `X-Request-Id` when it is well-formed (ingress or client correlation), else a new id. */
function requestId(request: { headers: Record<string, string | string[] | undefined> }): string {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : newId('req', 16)
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
