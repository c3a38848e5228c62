import type { LookupAddress } from 'node:dns'
import { createServer as createHttpServer, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createServer as createTcpServer } from 'node:net'
import { UpstreamError } from '@credential-service/core-domain'
import { createJwkCipher } from '@credential-service/crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { fetchAttributes } from './attribute-provider-client'
import { type OutboundPolicy, outboundFetch } from './outbound-fetch'
import { sendWebhook } from './webhook-delivery'

/** A loopback HTTP server that counts the TCP connections it accepts. */
async function listen(handler: RequestListener = (_req, res) => res.end('{}')) {
  const server = createHttpServer(handler)
  const seen = { connections: 0, hosts: [] as (string | undefined)[] }
  server.on('connection', () => seen.connections++)
  server.on('request', (req) => seen.hosts.push(req.headers.host))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  closers.push(() => new Promise((resolve) => server.close(() => resolve())))
  server.unref()
  return { port, seen, server }
}

/** A raw TCP listener (for https URLs): any accepted connection counts, TLS or not. */
async function listenTcp() {
  const seen = { connections: 0 }
  const server = createTcpServer((socket) => {
    seen.connections++
    socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise((resolve) => server.close(() => resolve())))
  return { port: (server.address() as AddressInfo).port, seen }
}

const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()))
})

/** DNS is not our component: a fixed table stands in for it, and records each question. */
function resolver(table: Record<string, string[]>) {
  const asked: string[] = []
  const resolve = async (hostname: string): Promise<LookupAddress[]> => {
    asked.push(hostname)
    return (table[hostname] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
  return { asked, resolve }
}

const policy = (overrides: Partial<OutboundPolicy> = {}): OutboundPolicy => ({
  allowHttp: true,
  allowedHosts: [],
  maxResponseBytes: 1024,
  ...overrides,
})

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(UpstreamError)
  return (error as UpstreamError).detail
}

describe('outboundFetch: the resolved address of every connection (S-120, S-121)', () => {
  it('S-120: a name resolving to 127.0.0.1 is refused and no connection reaches the local server', async () => {
    const { port, seen } = await listen()
    const dns = resolver({ 'attributes.example.com': ['127.0.0.1'] })
    const detail = await refusal(
      outboundFetch(
        `http://attributes.example.com:${port}/claims`,
        { name: "attribute provider 'hr'", method: 'POST', body: '{}', timeoutMs: 2000 },
        policy({ resolve: dns.resolve }),
      ),
    )
    expect(detail).toBe(
      "attribute provider 'hr': 'attributes.example.com' resolves to a non-public address (loopback); allow it with OUTBOUND_ALLOWED_HOSTS",
    )
    expect(dns.asked).toStrictEqual(['attributes.example.com'])
    expect(seen.connections).toBe(0)
  })

  it('S-120: over https as well (the TLS socket uses the same checked lookup)', async () => {
    const { port, seen } = await listenTcp()
    const dns = resolver({ 'hooks.example.com': ['127.0.0.1'] })
    const detail = await refusal(
      outboundFetch(
        `https://hooks.example.com:${port}/`,
        { name: 'webhook', timeoutMs: 2000 },
        policy({ allowHttp: false, resolve: dns.resolve }),
      ),
    )
    expect(detail).toContain("'hooks.example.com' resolves to a non-public address (loopback)")
    expect(seen.connections).toBe(0)
  })

  it('S-120: one internal address among public ones, or an IPv4-mapped loopback answer, refuses the name', async () => {
    const { port, seen } = await listen()
    for (const [answer, range] of [
      [['93.184.216.34', '10.0.0.7'], 'private'],
      [['::ffff:127.0.0.1'], 'ipv4Mapped loopback'],
      [['169.254.169.254'], 'linkLocal'],
      [['fd00::1'], 'uniqueLocal'],
    ] as const) {
      const dns = resolver({ 'mixed.example.com': [...answer] })
      const detail = await refusal(
        outboundFetch(
          `http://mixed.example.com:${port}/`,
          { name: 'status list', timeoutMs: 2000 },
          policy({ resolve: dns.resolve }),
        ),
      )
      expect(detail, answer.join()).toContain(`resolves to a non-public address (${range})`)
    }
    expect(seen.connections).toBe(0)
  })

  it('S-120: the name is resolved once and the socket goes to that checked address (no second DNS answer)', async () => {
    const { port, seen } = await listen((_req, res) => res.end('{"ok":true}'))
    const dns = resolver({ 'provider.test': ['127.0.0.1'] })
    const response = await outboundFetch(
      `http://provider.test:${port}/claims`,
      { name: 'attribute provider', timeoutMs: 2000 },
      policy({ allowedHosts: ['provider.test'], resolve: dns.resolve }),
    )
    expect(response.status).toBe(200)
    expect(response.body.toString()).toBe('{"ok":true}')
    expect(dns.asked).toStrictEqual(['provider.test'])
    expect(seen).toStrictEqual({ connections: 1, hosts: [`provider.test:${port}`] })
  })

  it('S-120: an IP literal allowed by OUTBOUND_ALLOWED_HOSTS connects; the same literal otherwise does not', async () => {
    const { port, seen } = await listen()
    const allowed = await outboundFetch(
      `http://127.0.0.1:${port}/`,
      { name: 'webhook', timeoutMs: 2000 },
      policy({ allowedHosts: ['127.0.0.1'] }),
    )
    expect(allowed.status).toBe(200)
    expect(seen.connections).toBe(1)
    const detail = await refusal(
      outboundFetch(`http://127.0.0.1:${port}/`, { name: 'webhook', timeoutMs: 2000 }, policy()),
    )
    expect(detail).toBe(
      "webhook: '127.0.0.1' is a non-public address (loopback); allow it with OUTBOUND_ALLOWED_HOSTS",
    )
    expect(seen.connections).toBe(1)
  })

  it('S-121: http is refused unless OUTBOUND_ALLOW_HTTP, before any connection', async () => {
    const { port, seen } = await listen()
    const detail = await refusal(
      outboundFetch(
        `http://127.0.0.1:${port}/status/1`,
        { name: 'status list', timeoutMs: 2000 },
        policy({ allowHttp: false, allowedHosts: ['127.0.0.1'] }),
      ),
    )
    expect(detail).toBe('status list: must use https')
    expect(seen.connections).toBe(0)
  })

  it('S-120: a redirect is not followed, whatever its target', async () => {
    const target = await listen()
    const { port } = await listen((_req, res) =>
      res.writeHead(302, { location: `http://127.0.0.1:${target.port}/` }).end(),
    )
    const detail = await refusal(
      outboundFetch(
        `http://127.0.0.1:${port}/`,
        { name: 'webhook', timeoutMs: 2000 },
        policy({ allowedHosts: ['127.0.0.1'] }),
      ),
    )
    expect(detail).toBe('webhook answered a redirect (HTTP 302), which is not followed')
    expect(target.seen.connections).toBe(0)
  })

  it('TSL §8.2: a 304 to a conditional request is no redirect: it is answered with its headers', async () => {
    const { port } = await listen((_req, res) => res.writeHead(304, { etag: '"v1"' }).end())
    const response = await outboundFetch(
      `http://127.0.0.1:${port}/`,
      { name: 'the status list', timeoutMs: 2000, headers: { 'if-none-match': '"v1"' } },
      policy({ allowedHosts: ['127.0.0.1'] }),
    )
    expect([response.status, response.headers.etag, response.body.length]).toStrictEqual([304, '"v1"', 0])
  })
})

describe('outboundFetch: size and time caps (S-125)', () => {
  const local = policy({ allowedHosts: ['127.0.0.1'], maxResponseBytes: 64 * 1024 })

  it('S-125: an endless body is cut off at OUTBOUND_MAX_RESPONSE_BYTES, long before the timeout', async () => {
    let written = 0
    const { port } = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      const chunk = Buffer.alloc(16 * 1024, 0x20)
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) written += chunk.length
        if (!res.destroyed) res.once('drain', pump)
      }
      pump()
    })
    const started = Date.now()
    const detail = await refusal(
      outboundFetch(
        `http://127.0.0.1:${port}/`,
        { name: "attribute provider 'big'", timeoutMs: 20_000 },
        local,
      ),
    )
    expect(detail).toBe("attribute provider 'big' answered more than 65536 bytes")
    expect(Date.now() - started).toBeLessThan(10_000)
    // The stream was abandoned at the cap: the server stopped far short of an unbounded body.
    expect(written).toBeLessThan(64 * 1024 * 1024)
  })

  it('S-125: a declared Content-Length over the cap is refused without reading the body', async () => {
    const { port } = await listen((_req, res) => {
      res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) })
      res.write('x')
    })
    const detail = await refusal(
      outboundFetch(`http://127.0.0.1:${port}/`, { name: 'status list', timeoutMs: 20_000 }, local),
    )
    expect(detail).toBe('status list answered more than 65536 bytes')
  })

  it('S-125: a body within the cap is returned whole', async () => {
    const payload = 'y'.repeat(64 * 1024)
    const { port } = await listen((_req, res) => res.end(payload))
    const response = await outboundFetch(
      `http://127.0.0.1:${port}/`,
      { name: 'status list', timeoutMs: 5000 },
      local,
    )
    expect(response.body.toString()).toBe(payload)
  })

  it('S-125: an answer that never comes fails after timeoutMs', async () => {
    const { port } = await listen(() => undefined)
    const started = Date.now()
    const detail = await refusal(
      outboundFetch(`http://127.0.0.1:${port}/`, { name: 'webhook', timeoutMs: 300 }, local),
    )
    expect(detail).toBe('webhook did not answer within 300 ms')
    expect(Date.now() - started).toBeLessThan(5000)
  })
})

describe('the callers: webhooks and attribute providers go through outboundFetch (S-120, S-125)', () => {
  const cipher = createJwkCipher('outbound-fetch-test-master-secret-0123456789')
  const endpoint = (url: string) => ({
    tenantId: 't1',
    id: 'events',
    url,
    authType: 'none',
    authHeader: null,
    authSecret: null,
  })

  it('S-120: a webhook whose name resolves to loopback is never called; the delivery fails with the reason', async () => {
    const { port, seen } = await listen()
    const dns = resolver({ 'hooks.example.com': ['127.0.0.1'] })
    const outcome = await sendWebhook(
      endpoint(`http://hooks.example.com:${port}/events`),
      '{"type":"test"}',
      {
        cipher,
        outbound: policy({ resolve: dns.resolve }),
      },
    )
    expect(outcome).toStrictEqual({
      ok: false,
      error:
        "webhook endpoint 'events': 'hooks.example.com' resolves to a non-public address (loopback); allow it with OUTBOUND_ALLOWED_HOSTS",
    })
    expect(seen.connections).toBe(0)
  })

  it('S-125: a webhook receiver that answers 2xx and then streams forever counts as delivered at once', async () => {
    const { port } = await listen((_req, res) => {
      res.writeHead(200)
      const timer = setInterval(() => res.write('x'.repeat(1024)), 5)
      res.on('close', () => clearInterval(timer))
    })
    const started = Date.now()
    const outcome = await sendWebhook(endpoint(`http://127.0.0.1:${port}/events`), '{"type":"test"}', {
      cipher,
      outbound: policy({ allowedHosts: ['127.0.0.1'] }),
      timeoutMs: 20_000,
    })
    expect(outcome).toStrictEqual({ ok: true })
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('S-120: an attribute provider whose name resolves to the metadata address is refused before connecting', async () => {
    const dns = resolver({ 'claims.example.com': ['169.254.169.254'] })
    const error = await fetchAttributes(
      { ...endpoint('https://claims.example.com/claims'), id: 'hr', timeoutMs: 2000 },
      { tenantId: 't1', sessionId: 'ses_1', credentialConfigurationId: 'pid' },
      { cipher, outbound: policy({ allowHttp: false, resolve: dns.resolve }) },
    ).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(UpstreamError)
    expect((error as UpstreamError).detail).toBe(
      "attribute provider 'hr': 'claims.example.com' resolves to a non-public address (linkLocal); allow it with OUTBOUND_ALLOWED_HOSTS",
    )
  })
})
