import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TEST_MASTER_SECRET, type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { verifyMasterSecret } from '@credential-service/server-kit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startReceiver } from './harness'
import { startAttributeProvider } from './issuer-fixture'
import { clientToken, type ServiceProcess, startProcess } from './processes'
import { redeemOffer } from './wallet'

/** A span as the OTLP/HTTP JSON exporter sends it (ids in hex). */
interface ExportedSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: Record<string, unknown>
  service: string
}

const SERVER = 2
const CLIENT = 3
const PRODUCER = 4

// The JSON encoding of OTLP writes ids as hex; base64 (the protobuf JSON mapping) is read too.
const hexId = (id: string | undefined) =>
  id && !/^[0-9a-f]*$/.test(id) ? Buffer.from(id, 'base64').toString('hex') : (id ?? '')

type AnyValue = {
  stringValue?: string
  intValue?: string | number
  boolValue?: boolean
  doubleValue?: number
}
const anyValue = (v: AnyValue) =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue))
const attributesOf = (list: { key: string; value: AnyValue }[] = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, anyValue(value)]))

/**
 * An in-process OTLP/HTTP receiver (JSON, as `@opentelemetry/exporter-*-otlp-http` send it):
 * keeps every span of `POST /v1/traces` and the metric names of `POST /v1/metrics`.
 */
async function startOtlpReceiver() {
  const spans: ExportedSpan[] = []
  const metricNames = new Set<string>()
  const contentTypes = new Set<string>()
  const server = createServer((req: IncomingMessage, res) => {
    let raw = ''
    req.on('data', (chunk) => {
      raw += chunk
    })
    req.on('end', () => {
      contentTypes.add(String(req.headers['content-type']))
      const body = JSON.parse(raw || '{}')
      if (req.url === '/v1/traces') {
        for (const resource of body.resourceSpans ?? []) {
          const service = attributesOf(resource.resource?.attributes)['service.name'] as string
          for (const scope of resource.scopeSpans ?? [])
            for (const span of scope.spans ?? [])
              spans.push({
                traceId: hexId(span.traceId),
                spanId: hexId(span.spanId),
                ...(span.parentSpanId ? { parentSpanId: hexId(span.parentSpanId) } : {}),
                name: span.name,
                kind: span.kind,
                attributes: attributesOf(span.attributes),
                service,
              })
        }
      }
      if (req.url === '/v1/metrics') {
        for (const resource of body.resourceMetrics ?? [])
          for (const scope of resource.scopeMetrics ?? [])
            for (const metric of scope.metrics ?? []) metricNames.add(metric.name)
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    metricNames,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const rootId = `root-${randomBytes(4).toString('hex')}`
const rootSecret = 'tracing-root-secret-0123456789abcdef'

/**
 * Issue 23 item 6: the all-in-one process, started as in production, with
 * OTEL_EXPORTER_OTLP_ENDPOINT pointing at a receiver in this test. A wallet that traces sends one
 * `traceparent` with each request of one pre-authorized issuance whose claims come from an
 * attribute provider and whose notification goes to a webhook.
 */
describe('issue 23 item 6: OpenTelemetry traces over OTLP/HTTP', () => {
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>
  let provider: Awaited<ReturnType<typeof startAttributeProvider>>
  let webhook: Awaited<ReturnType<typeof startReceiver>>
  let service: ServiceProcess
  let scratch: string

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'tracing-'))
    otlp = await startOtlpReceiver()
    provider = await startAttributeProvider()
    webhook = await startReceiver()
    const url = process.env.TEST_DATABASE_URL
    if (url) {
      // The shared database must already remember the suites' secret, whichever suite runs first.
      const database = await (testDatabases().find((d) => d.name === 'postgres') as TestDatabase).open()
      await verifyMasterSecret(database.db, TEST_MASTER_SECRET)
      await database.close()
    }
    service = await startProcess(
      'all-in-one',
      {
        MASTER_SECRET: TEST_MASTER_SECRET,
        AUTH_CLIENT_ID: rootId,
        AUTH_CLIENT_SECRET: rootSecret,
        ...(url ? { DATABASE_URL: url } : { DATA_DIR: scratch }),
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        // The receiver reads JSON; http/protobuf (the default) is telemetry-protocol.test.ts's.
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'tracing-test',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
        // The batch span processor's delay (read by the SDK): export quickly.
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_METRIC_EXPORT_INTERVAL: '1000',
        RECORD_MODULE_LOADS: join(scratch, 'modules.txt'),
      },
      { captureStdout: true, nodeArgs: ['--import', './apps/all-in-one/test/record-module-loads.mjs'] },
    )
    expect(await service.ready(), service.stderr()).toBe(200)
  }, 120_000)

  afterAll(async () => {
    await service?.stop()
    provider?.close()
    webhook?.close()
    await otlp?.close()
    rmSync(scratch, { recursive: true, force: true })
  })

  // The counterpart of idle-modules.test.ts, where a process without the endpoint loads none of it.
  it('with the endpoint set, the process loads the SDK and the OTLP exporters', () => {
    const loaded = readFileSync(join(scratch, 'modules.txt'), 'utf8')
    for (const name of [
      'sdk-trace-node',
      'sdk-metrics',
      'exporter-trace-otlp-http',
      'exporter-metrics-otlp-http',
    ])
      expect(loaded).toContain(`/node_modules/@opentelemetry/${name}/`)
  })

  it('one issuance: server span → protocol step → database and attribute provider spans; the webhook delivery in the same trace, carrying its traceparent; log lines carry the trace id', async () => {
    const origin = service.origin
    const json = { 'content-type': 'application/json' }
    const call = async (path: string, token: string, body: unknown) => {
      const response = await fetch(`${origin}${path}`, {
        method: 'POST',
        headers: { ...json, authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      })
      expect(response.status, `${path}: ${await response.clone().text()}`).toBeLessThan(300)
      return response.json() as Promise<Record<string, unknown>>
    }
    const tenant = `trace-${randomBytes(4).toString('hex')}`
    const root = await clientToken(origin, rootId, rootSecret)
    await call('/api/tenants', root, { id: tenant, name: 'Tracing' })
    await call(`/api/tenants/${tenant}/clients`, root, {
      clientId: `${tenant}-admin`,
      clientSecret: 'tracing-admin-secret-0123',
      roles: ['key:manage', 'issuance:config', 'issuance:offer'],
    })
    const admin = await clientToken(origin, `${tenant}-admin`, 'tracing-admin-secret-0123')
    await call('/api/key-chains', admin, { source: 'generate', id: 'signing' })
    await call('/api/attribute-providers', admin, { id: 'hr', url: provider.url })
    await call('/api/webhook-endpoints', admin, {
      id: 'events',
      url: `${webhook.url}/events`,
      auth: { type: 'hmac' },
      // The notification's delivery is the one this test follows (not credential.issued).
      events: ['issuance.notification'],
    })
    await call('/api/credentials', admin, {
      id: 'employee',
      config: { format: 'dc+sd-jwt', vct: 'urn:example:employee' },
      fields: [{ path: ['given_name'], type: 'string', mandatory: true, disclosable: true }],
      keyChainId: 'signing',
      attributeProviderId: 'hr',
      webhookEndpointId: 'events',
    })
    provider.answer({ given_name: 'Erika' })
    const offer = await call('/api/offers', admin, { credentialConfigurationIds: ['employee'] })

    // The wallet's own span: the parent of every server span of the issuance.
    const traceId = randomBytes(16).toString('hex')
    const walletSpanId = randomBytes(8).toString('hex')
    const traceparent = `00-${traceId}-${walletSpanId}-01`
    const issued = await redeemOffer({
      credentialOffer: offer.credentialOffer as Record<string, unknown>,
      configurationId: 'employee',
      headers: { traceparent },
    })
    expect(provider.calls).toHaveLength(1)
    const notified = await fetch(`${origin}/issuers/${tenant}/notification`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${issued.accessToken}`, traceparent },
      body: JSON.stringify({ notification_id: issued.notificationId, event: 'credential_accepted' }),
    })
    expect(notified.status).toBe(204)

    // The webhook request carries the issuance's trace.
    const delivery = await until('the webhook delivery', () => webhook.received.at(0))
    expect(delivery.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))

    const ofTrace = () => otlp.spans.filter((s) => s.traceId === traceId)
    const named = (name: string) => ofTrace().find((s) => s.name === name)
    // The delivery span ends after its POST (it records the outcome first): wait for both.
    await until('the webhook spans', () => named('POST webhook') && named('webhook deliver'))
    const spans = ofTrace()
    const byId = new Map(spans.map((s) => [s.spanId, s]))
    const parentOf = (span: ExportedSpan | undefined) => byId.get(span?.parentSpanId ?? '')
    const serverSpan = (route: string) => {
      const span = named(`POST ${route}`)
      expect(span, `server span POST ${route} in ${spans.map((s) => s.name).join(', ')}`).toBeDefined()
      expect(span?.kind).toBe(SERVER)
      // The wallet's span is the parent: the caller's traceparent is continued.
      expect(span?.parentSpanId).toBe(walletSpanId)
      return span as ExportedSpan
    }
    expect(spans.every((s) => s.service === 'tracing-test')).toBe(true)

    const token = serverSpan('/issuers/:tenant/token')
    expect(token.attributes).toMatchObject({
      'http.route': '/issuers/:tenant/token',
      'http.response.status_code': 200,
    })
    expect(parentOf(named('issuer token'))).toBe(token)
    expect(parentOf(named('issuer nonce'))).toBe(serverSpan('/issuers/:tenant/nonce'))

    // Credential request: server span → issuer credential → claims → POST attribute-provider.
    const credentialServer = serverSpan('/issuers/:tenant/credential')
    const credential = named('issuer credential')
    expect(parentOf(credential)).toBe(credentialServer)
    const claims = named('issuer claims')
    expect(parentOf(claims)).toBe(credential)
    const outbound = named('POST attribute-provider')
    expect(parentOf(outbound)).toBe(claims)
    expect(outbound?.kind).toBe(CLIENT)
    expect(outbound?.attributes).toMatchObject({
      'server.address': '127.0.0.1',
      'http.response.status_code': 200,
    })
    // The attribute provider was called with the outbound span as its parent.
    expect(parentOf(named('issuer verify proofs'))).toBe(credential)
    expect(parentOf(named('issuer sign credentials'))).toBe(credential)
    // Database statements under the steps: operation and table, never values.
    const statements = spans.filter((s) => s.attributes['db.system.name'] === 'postgresql')
    expect(statements.length).toBeGreaterThan(3)
    expect(statements.every((s) => s.kind === CLIENT && !('db.query.text' in s.attributes))).toBe(true)
    const underCredential = (span: ExportedSpan) => {
      for (let at: ExportedSpan | undefined = span; at; at = parentOf(at)) if (at === credential) return true
      return false
    }
    expect(statements.some(underCredential)).toBe(true)

    // Notification → webhook: the delivery span continues the stored traceparent.
    const notification = named('issuer notification')
    expect(parentOf(notification)).toBe(serverSpan('/issuers/:tenant/notification'))
    const enqueue = statements.find(
      (s) => s.name.startsWith('insert webhook_deliveries') || s.name === 'transaction',
    )
    expect(enqueue).toBeDefined()
    const deliver = named('webhook deliver')
    expect(deliver?.kind).toBe(PRODUCER)
    expect(deliver?.attributes).toMatchObject({
      'webhook.endpoint_id': 'events',
      'webhook.event_type': 'issuance.notification',
    })
    // Parented by the span active when the event was stored (a step of the notification request).
    for (let at = parentOf(deliver); ; at = parentOf(at)) {
      expect(at, 'the delivery span descends from the notification request').toBeDefined()
      if (at?.name === 'POST /issuers/:tenant/notification') break
    }
    const webhookCall = named('POST webhook')
    expect(parentOf(webhookCall)).toBe(deliver)
    expect(delivery.headers.traceparent).toBe(`00-${traceId}-${webhookCall?.spanId}-01`)

    // Every request log line of the traced requests carries the trace id and its span id.
    const lines = service
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    const completed = lines.filter((l) => l.msg === 'request completed' && l.trace_id === traceId)
    expect(completed.map((l) => l.span_id).sort()).toStrictEqual(
      spans
        .filter((s) => s.kind === SERVER)
        .map((s) => s.spanId)
        .sort(),
    )
    // A line of another request carries its own trace, not this one.
    expect(lines.filter((l) => l.msg === 'request completed' && l.trace_id === undefined)).toStrictEqual([])

    // Metrics over OTLP: the HTTP server duration histogram.
    await until('the metrics export', () =>
      otlp.metricNames.has('http.server.request.duration') ? true : undefined,
    )
    expect([...otlp.contentTypes]).toStrictEqual(['application/json'])
  }, 60_000)
})
