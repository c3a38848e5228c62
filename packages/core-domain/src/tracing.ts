import {
  type Attributes,
  type Context,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api'

/**
 * Tracing for every package: spans through `@opentelemetry/api`, which records nothing until an
 * SDK registers (server-kit's `startTelemetry`, only when an OTLP endpoint is configured). Off,
 * each helper returns after one global read: no span object, no context switch, no attribute
 * object built by the caller (callers pass attributes as a function where building them costs).
 */

// Set by the SDK starter once its tracer provider is registered; a process-wide fact like the
// provider itself, which @opentelemetry/api also keeps on `globalThis`.
const ON = Symbol.for('credential-service.tracing')
type Flagged = { [ON]?: true }

/** Whether an SDK records spans in this process (OTEL_EXPORTER_OTLP_ENDPOINT set at start). */
export function tracingOn(): boolean {
  return (globalThis as Flagged)[ON] === true
}

/** Called by the SDK starter only, after it registered its tracer provider. */
export function markTracingOn(on: boolean): void {
  if (on) (globalThis as Flagged)[ON] = true
  else delete (globalThis as Flagged)[ON]
}

let tracer: Tracer | undefined
const getTracer = () => {
  tracer ??= trace.getTracer('credential-service')
  return tracer
}

export interface SpanOptions {
  /** `client` for calls out of the process (database, HTTP, key providers); `internal` by default. */
  kind?: 'client' | 'internal' | 'producer'
  /** Attributes at the start; never secrets, parameter values or personal data. */
  attributes?: () => Attributes
  /** The parent, when it is not the active context (a queued job resuming a request's trace). */
  parent?: Context
  /**
   * No span without a parent: work of background timers (the outbox poll, rate-limit flushes)
   * would otherwise start a trace of one statement each, every few seconds.
   */
  requireParent?: boolean
}

const KINDS = { client: SpanKind.CLIENT, internal: SpanKind.INTERNAL, producer: SpanKind.PRODUCER }

/**
 * Runs `fn` in a span named `name`, active for everything `fn` awaits; the span ends when `fn`
 * settles and records a thrown error. Tracing off: `fn()` and nothing else.
 */
export function inSpan<T>(name: string, fn: (span?: Span) => Promise<T>, options?: SpanOptions): Promise<T> {
  if ((globalThis as Flagged)[ON] !== true) return fn()
  const parent = options?.parent ?? context.active()
  const span = getTracer().startSpan(
    name,
    { kind: KINDS[options?.kind ?? 'internal'], attributes: options?.attributes?.() },
    parent,
  )
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await fn(span)
    } catch (error) {
      failSpan(span, error)
      throw error
    } finally {
      span.end()
    }
  })
}

/** Marks `span` failed by `error` (its type and message; callers' messages carry no secrets). */
export function failSpan(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error))
  span.setStatus({ code: SpanStatusCode.ERROR })
}

/**
 * The W3C `traceparent` of the active span, to store with work done later (a queued webhook
 * delivery); undefined when tracing is off or no span is active.
 */
export function currentTraceparent(): string | undefined {
  if ((globalThis as Flagged)[ON] !== true) return undefined
  const carrier: Record<string, string> = {}
  propagation.inject(context.active(), carrier)
  return carrier.traceparent
}

/** The context a stored `traceparent` continues (root context when absent or malformed). */
export function contextOf(traceparent: string | null | undefined): Context {
  return propagation.extract(context.active(), traceparent ? { traceparent } : {})
}

/**
 * Adds the active trace's `traceparent` (and `tracestate`) to outbound request headers, in place.
 * Tracing off: leaves them as they are.
 */
export function injectTraceHeaders(headers: Record<string, string>): void {
  if ((globalThis as Flagged)[ON] !== true) return
  propagation.inject(context.active(), headers)
}

/** A span started by {@link openSpan}, ended by its owner. */
export interface OpenSpan {
  /** Ends the span, failed when `error` is given. Later calls do nothing. */
  end(error?: unknown): void
}

/**
 * Starts a span under the active one without making it active, for work that is not one awaited
 * function (a database statement whose promise is awaited later, maybe twice). Tracing off:
 * undefined, and nothing is allocated.
 */
export function openSpan(name: string, options?: SpanOptions): OpenSpan | undefined {
  if ((globalThis as Flagged)[ON] !== true) return undefined
  const parent = options?.parent ?? context.active()
  if (options?.requireParent && !trace.getSpan(parent)) return undefined
  const span = getTracer().startSpan(
    name,
    { kind: KINDS[options?.kind ?? 'internal'], attributes: options?.attributes?.() },
    parent,
  )
  let open = true
  return {
    end(error) {
      if (!open) return
      open = false
      if (error !== undefined) failSpan(span, error)
      span.end()
    },
  }
}

/**
 * `fn` as a protocol step: each call runs in a span named `name` (`issuer credential`), child of
 * the request's. Tracing off: `fn` is called directly.
 */
export function traced<A extends unknown[], R>(
  name: string,
  fn: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return (...args) => ((globalThis as Flagged)[ON] === true ? inSpan(name, () => fn(...args)) : fn(...args))
}

type AsyncMethod = (...args: never[]) => Promise<unknown>

/**
 * `service` with its `steps` traced (`issuer nonce`, `issuer credential`): decided when the
 * service is built, so a service built with tracing off is returned as it is.
 */
export function tracedSteps<T extends object, K extends keyof T>(prefix: string, service: T, steps: K[]): T {
  if ((globalThis as Flagged)[ON] !== true) return service
  const wrapped: Partial<T> = {}
  for (const step of steps) {
    const method = service[step] as AsyncMethod
    wrapped[step] = traced(`${prefix} ${String(step)}`, method) as T[K]
  }
  return { ...service, ...wrapped }
}
