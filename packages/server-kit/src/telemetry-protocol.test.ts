import { execFile } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const telemetry = fileURLToPath(new URL('./telemetry.ts', import.meta.url))

/** A child process starts telemetry with `protocol`, ends one span and shuts down (flushing it); the exporter reads its URL from the environment, as in a process. */
const script = (protocol: string | undefined) => `
import { trace } from '@opentelemetry/api'
import { startTelemetry } from ${JSON.stringify(telemetry)}
const started = await startTelemetry({
  OTEL_SDK_DISABLED: false,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
  OTEL_METRIC_EXPORT_INTERVAL: 60000,
  ${protocol ? `OTEL_EXPORTER_OTLP_PROTOCOL: ${JSON.stringify(protocol)},` : ''}
}, 'protocol-test')
trace.getTracer('test').startSpan('one span').end()
await started.shutdown()
`

/**
 * Issue 23 item 6: OTLP/HTTP in either encoding the OpenTelemetry environment names, protobuf by
 * default (OTEL_EXPORTER_OTLP_PROTOCOL, OpenTelemetry SDK environment variables).
 */
describe('OTLP protocol', () => {
  const received: { path: string; type: string; bytes: Buffer }[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        type: String(req.headers['content-type']),
        bytes: Buffer.concat(chunks),
      })
      res.writeHead(200).end()
    })
  })
  let url: string
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  async function exportWith(protocol: string | undefined) {
    received.length = 0
    await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script(protocol)], {
      env: { ...process.env, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url },
      cwd: fileURLToPath(new URL('..', import.meta.url)),
    })
    return received
  }

  it('sends protobuf by default (http/protobuf)', async () => {
    const [request] = await exportWith(undefined)
    expect(request?.path).toBe('/v1/traces')
    expect(request?.type).toBe('application/x-protobuf')
    expect(request?.bytes.includes(Buffer.from('one span'))).toBe(true)
    expect(() => JSON.parse(request?.bytes.toString() ?? '')).toThrow()
  }, 30_000)

  it('sends JSON with http/json', async () => {
    const [request] = await exportWith('http/json')
    expect(request?.type).toBe('application/json')
    expect(JSON.stringify(JSON.parse(request?.bytes.toString() ?? '{}'))).toContain('"name":"one span"')
  }, 30_000)
})
