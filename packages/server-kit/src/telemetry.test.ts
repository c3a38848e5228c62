import { diag } from '@opentelemetry/api'
import { afterAll, describe, expect, it } from 'vitest'
import { telemetryStartLine, warnOnExportFailures } from './telemetry'

const OFF = { OTEL_SDK_DISABLED: false, OTEL_METRIC_EXPORT_INTERVAL: 60_000 }

describe('telemetry log lines (issue 42 item 4)', () => {
  afterAll(() => diag.disable())

  it('the start-up line says whether tracing is on and where it exports, never credentials in the URL', () => {
    expect(telemetryStartLine(OFF)).toStrictEqual({ tracing: false })
    expect(
      telemetryStartLine({ ...OFF, OTEL_SDK_DISABLED: true, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }),
    ).toStrictEqual({
      tracing: false,
    })
    expect(
      telemetryStartLine({
        ...OFF,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://user:s3cret@collector.example:4318/base?token=t0ken',
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'https://metrics.example/v1/metrics',
      }),
    ).toStrictEqual({
      tracing: true,
      protocol: 'http/protobuf',
      tracesEndpoint: 'https://collector.example:4318/base',
      metricsEndpoint: 'https://metrics.example/v1/metrics',
    })
  })

  it('failed exports warn at most once per interval, counting what they held back', async () => {
    const lines: Record<string, unknown>[] = []
    let clock = 0
    await warnOnExportFailures({ warn: (object) => void lines.push(object) }, 60_000, () => clock)
    // What the OTLP exporters report through the SDK's diagnostic logger when a collector is down.
    for (let n = 0; n < 5; n++) diag.error('export failed', new Error('connect ECONNREFUSED 127.0.0.1:4318'))
    expect(lines).toStrictEqual([
      { diagnostic: 'export failed', cause: 'connect ECONNREFUSED 127.0.0.1:4318', suppressed: 0 },
    ])
    clock = 60_000
    diag.warn('export failed again')
    expect(lines.at(-1)).toStrictEqual({ diagnostic: 'export failed again', cause: undefined, suppressed: 4 })
    diag.info('not a failure')
    expect(lines).toHaveLength(2)
  })
})
