import { markTracingOn } from '@credential-service/core-domain/tracing'
import { SERVICE_VERSION } from './version'

/** The OTEL_* variables a process reads at start (zCommonEnv); the SDK reads the other standard ones itself. */
export interface TelemetryConfig {
  OTEL_SDK_DISABLED: boolean
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string | undefined
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT?: string | undefined
  OTEL_METRIC_EXPORT_INTERVAL: number
  /** http/protobuf when absent (the OpenTelemetry default). */
  OTEL_EXPORTER_OTLP_PROTOCOL?: 'http/protobuf' | 'http/json' | undefined
}

/** The SDK a process runs when telemetry is on; `shutdown` flushes what is buffered. */
export interface Telemetry {
  shutdown(): Promise<void>
}

/** Whether the configuration turns telemetry on: an OTLP endpoint, and the SDK not disabled. */
export function telemetryWanted(config: TelemetryConfig): boolean {
  return (
    !config.OTEL_SDK_DISABLED &&
    Boolean(config.OTEL_EXPORTER_OTLP_ENDPOINT || config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
  )
}

/**
 * Starts OpenTelemetry traces and metrics over OTLP/HTTP (protobuf, or JSON) when the configuration asks for
 * it; undefined otherwise, with nothing loaded. The SDK modules are imported here only, so a
 * process without an endpoint keeps neither their memory nor any per-request work: every span
 * helper returns after one flag read. The exporters read the standard variables themselves
 * (OTEL_EXPORTER_OTLP_*_ENDPOINT, _HEADERS, _TIMEOUT), the tracer provider OTEL_TRACES_SAMPLER and
 * _ARG, the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; `serviceName` is the default.
 */
export async function startTelemetry(
  config: TelemetryConfig,
  serviceName: string,
): Promise<Telemetry | undefined> {
  if (!telemetryWanted(config)) return undefined
  const json = config.OTEL_EXPORTER_OTLP_PROTOCOL === 'http/json'
  const [trace, metrics, resources, traceExporter, metricExporter] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/resources'),
    json
      ? import('@opentelemetry/exporter-trace-otlp-http')
      : import('@opentelemetry/exporter-trace-otlp-proto'),
    json
      ? import('@opentelemetry/exporter-metrics-otlp-http')
      : import('@opentelemetry/exporter-metrics-otlp-proto'),
  ])
  const { metrics: metricsApi } = await import('@opentelemetry/api')
  const resource = resources
    .defaultResource()
    .merge(
      resources.resourceFromAttributes({ 'service.name': serviceName, 'service.version': SERVICE_VERSION }),
    )
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the defaults.
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
  const tracerProvider = new trace.NodeTracerProvider({
    resource,
    spanProcessors: [new trace.BatchSpanProcessor(new traceExporter.OTLPTraceExporter())],
  })
  // AsyncLocalStorage context, W3C trace context and baggage propagation.
  tracerProvider.register()
  const metricsOn = Boolean(config.OTEL_EXPORTER_OTLP_ENDPOINT || config.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT)
  const meterProvider = metricsOn
    ? new metrics.MeterProvider({
        resource,
        readers: [
          new metrics.PeriodicExportingMetricReader({
            exporter: new metricExporter.OTLPMetricExporter(),
            exportIntervalMillis: config.OTEL_METRIC_EXPORT_INTERVAL,
          }),
        ],
      })
    : undefined
  if (meterProvider) metricsApi.setGlobalMeterProvider(meterProvider)
  markTracingOn(true)
  return {
    async shutdown() {
      markTracingOn(false)
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider?.shutdown()])
    },
  }
}

/** An endpoint as a log line may show it: no user info, no query. */
function shownEndpoint(url: string | undefined): string | undefined {
  if (!url) return undefined
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
  } catch {
    return 'unparsable'
  }
}

/**
 * The start-up line about tracing: on or off, and where spans and metrics go (OTLP headers, which
 * may hold credentials, are never shown).
 */
export function telemetryStartLine(config: TelemetryConfig): Record<string, unknown> {
  if (!telemetryWanted(config)) return { tracing: false }
  return {
    tracing: true,
    protocol: config.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    tracesEndpoint: shownEndpoint(
      config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? config.OTEL_EXPORTER_OTLP_ENDPOINT,
    ),
    metricsEndpoint: shownEndpoint(
      config.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ?? config.OTEL_EXPORTER_OTLP_ENDPOINT,
    ),
  }
}

/**
 * Failed exports (the SDK reports them through its diagnostic logger) become one warn line per
 * `intervalMs` at most, with how many were suppressed since: a collector that is down must not
 * flood the log at every batch.
 */
export async function warnOnExportFailures(
  log: { warn(object: Record<string, unknown>, message: string): void },
  intervalMs = 60_000,
  now: () => number = Date.now,
): Promise<void> {
  const { diag, DiagLogLevel } = await import('@opentelemetry/api')
  let last = Number.NEGATIVE_INFINITY
  let suppressed = 0
  const report = (message: string, ...args: unknown[]) => {
    if (now() - last < intervalMs) {
      suppressed++
      return
    }
    last = now()
    const cause = args.find((arg) => arg instanceof Error) as Error | undefined
    log.warn({ diagnostic: message, cause: cause?.message, suppressed }, 'telemetry export failed')
    suppressed = 0
  }
  const quiet = () => {}
  diag.setLogger(
    { error: report, warn: report, info: quiet, debug: quiet, verbose: quiet },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  )
}
