import {
  inSpan,
  markTracingOn,
  openSpan,
  tracedSteps,
  tracingOn,
} from '@credential-service/core-domain/tracing'
import { createVaultProvider } from '@credential-service/crypto'
import { startFakeVault } from '@credential-service/crypto/testing'
import { context, diag, propagation, SpanKind, trace } from '@opentelemetry/api'
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTelemetry, telemetryStartLine, telemetryWanted, warnOnExportFailures } from './telemetry'

const off = { OTEL_SDK_DISABLED: false, OTEL_METRIC_EXPORT_INTERVAL: 60_000 }

describe('issue 23 item 6: telemetry is off unless an OTLP endpoint is set', () => {
  it('no endpoint, or OTEL_SDK_DISABLED: nothing starts and the span helpers stay off', async () => {
    expect(telemetryWanted(off)).toBe(false)
    expect(
      telemetryWanted({
        ...off,
        OTEL_SDK_DISABLED: true,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      }),
    ).toBe(false)
    expect(
      telemetryWanted({ ...off, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }),
    ).toBe(true)
    expect(await startTelemetry(off, 'credential-service-test')).toBeUndefined()
    expect(tracingOn()).toBe(false)
  })
})

/**
 * The span helpers against an SDK registered in this worker with an in-memory exporter. The flag
 * (set by startTelemetry in a process) decides alone whether spans are made.
 */
describe('issue 23 item 6: span helpers', () => {
  const exporter = new InMemorySpanExporter()
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  let vault: Awaited<ReturnType<typeof startFakeVault>>

  beforeAll(async () => {
    provider.register()
    vault = await startFakeVault('vault-token')
    await vault.addKey('issuer-key')
  })
  afterAll(async () => {
    markTracingOn(false)
    trace.disable()
    context.disable()
    propagation.disable()
    await provider.shutdown()
    await vault.close()
  })

  it('off: no span is made, even with an SDK registered; a traced service is the same object', async () => {
    exporter.reset()
    const service = { nonce: async () => 'n' }
    expect(tracedSteps('issuer', service, ['nonce'])).toBe(service)
    expect(await inSpan('step', async (span) => span)).toBeUndefined()
    expect(openSpan('select sessions')).toBeUndefined()
    const signer = createVaultProvider({ address: vault.address, token: 'vault-token' })
    await signer.sign('issuer-key', 'ES256', new TextEncoder().encode('data'))
    expect(exporter.getFinishedSpans()).toStrictEqual([])
  })

  it('on: a key provider call is a client span under the active step with its outcome, a failure is recorded', async () => {
    exporter.reset()
    markTracingOn(true)
    try {
      const signer = createVaultProvider({ address: vault.address, token: 'vault-token' })
      await inSpan('issuer sign credentials', async () => {
        await signer.sign('issuer-key', 'ES256', new TextEncoder().encode('data'))
        await expect(signer.describe('missing-key')).rejects.toThrow(/missing-key/)
      })
    } finally {
      markTracingOn(false)
    }
    const spans = exporter.getFinishedSpans()
    const step = spans.find((s) => s.name === 'issuer sign credentials')
    const sign = spans.find((s) => s.name === 'vault sign')
    const describeSpan = spans.find((s) => s.name === 'vault describe')
    expect(sign?.kind).toBe(SpanKind.CLIENT)
    expect(sign?.parentSpanContext?.spanId).toBe(step?.spanContext().spanId)
    expect(sign?.attributes).toStrictEqual({
      'key_provider.system': 'vault',
      'key_provider.key_id': 'issuer-key',
      'key_provider.outcome': 'ok',
    })
    expect(sign?.status.code).toBe(0)
    expect(describeSpan?.status.code).toBe(2)
    // The outcome is the KeyProviderError's reason (the metric's `outcome` label too).
    expect(describeSpan?.attributes['key_provider.outcome']).toBe('not_found')
    expect(describeSpan?.events.map((e) => e.name)).toStrictEqual(['exception'])
  })
})

describe('telemetry log lines (issue 42 item 4)', () => {
  afterAll(() => diag.disable())

  it('the start-up line says whether tracing is on and where it exports, never credentials in the URL', () => {
    expect(telemetryStartLine(off)).toStrictEqual({ tracing: false })
    expect(
      telemetryStartLine({ ...off, OTEL_SDK_DISABLED: true, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }),
    ).toStrictEqual({
      tracing: false,
    })
    expect(
      telemetryStartLine({
        ...off,
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
