import { tracingOn } from '@credential-service/core-domain/tracing'
import {
  type Context,
  context,
  type Histogram,
  metrics,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api'
import type { FastifyInstance, FastifyRequest } from 'fastify'

/** The request's server span and the context it is active in. */
interface Traced {
  span: Span
  context: Context
}

const TRACED = Symbol('credential-service.request-span')
type WithSpan = FastifyRequest & { [TRACED]?: Traced }

// Set on a request's logger once it carries the trace ids itself (the mixin then adds nothing).
const BOUND = Symbol.for('credential-service.log-trace-bound')

/**
 * pino's `mixin` when tracing is on: `trace_id` and `span_id` of the active span on every line
 * logged while one is active (background jobs, outbound calls, protocol steps). Request loggers
 * carry the ids of their server span already: nothing is added twice.
 */
export function traceLogMixin(_object: object, _level: number, logger: object): Record<string, string> {
  if ((logger as { [BOUND]?: true })[BOUND]) return {}
  const span = trace.getSpan(context.active())
  if (!span) return {}
  const { traceId, spanId } = span.spanContext()
  return { trace_id: traceId, span_id: spanId }
}

/**
 * A server span per request (OpenTelemetry HTTP semantic conventions), named by route
 * (`POST /issuers/:tenant/credential`), continuing the caller's W3C `traceparent`, active for the
 * hooks and the handler; the request's log lines carry its ids; `http.server.request.duration`
 * is recorded per route. Registers nothing when tracing is off.
 */
export function registerRequestTracing(app: FastifyInstance): void {
  if (!tracingOn()) return
  const tracer = trace.getTracer('credential-service')
  let duration: Histogram | undefined
  app.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.url
    const parent = propagation.extract(ROOT_CONTEXT, request.headers)
    const span = tracer.startSpan(
      route ? `${request.method} ${route}` : request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          ...(route ? { 'http.route': route } : {}),
          'url.scheme': request.protocol,
          'client.address': request.ip,
          'http.request_id': request.id,
        },
      },
      parent,
    )
    const active = trace.setSpan(parent, span)
    ;(request as WithSpan)[TRACED] = { span, context: active }
    const { traceId, spanId } = span.spanContext()
    const log = request.log.child({ trace_id: traceId, span_id: spanId })
    ;(log as unknown as { [BOUND]: true })[BOUND] = true
    request.log = log
    reply.log = log
    context.with(active, done)
  })
  // The body is read between onRequest and preValidation, on the socket's own async context:
  // enter the span's again for the rest of the request.
  app.addHook('preValidation', (request, _reply, done) => {
    const traced = (request as WithSpan)[TRACED]
    if (traced) context.with(traced.context, done)
    else done()
  })
  app.addHook('onError', (request, reply, error, done) => {
    const traced = (request as WithSpan)[TRACED]
    if (traced && reply.statusCode >= 500) traced.span.recordException(error)
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    const traced = (request as WithSpan)[TRACED]
    if (!traced) return done()
    const status = reply.statusCode
    traced.span.setAttribute('http.response.status_code', status)
    if (status >= 500) traced.span.setStatus({ code: SpanStatusCode.ERROR })
    traced.span.end()
    duration ??= metrics.getMeter('credential-service').createHistogram('http.server.request.duration', {
      unit: 's',
      description: 'Duration of HTTP server requests',
    })
    const route = request.routeOptions.url
    duration.record(reply.elapsedTime / 1000, {
      'http.request.method': request.method,
      'http.response.status_code': status,
      ...(route ? { 'http.route': route } : {}),
    })
    done()
  })
  app.addHook('onRequestAbort', (request, done) => {
    const traced = (request as WithSpan)[TRACED]
    traced?.span.setStatus({ code: SpanStatusCode.ERROR, message: 'aborted by the client' })
    traced?.span.end()
    done()
  })
}
