import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { testDatabases } from '@credential-service/db-schema/testing'
import { DEFAULT_HTTP_LIMITS, PROBLEM_TYPE_BASE, SERVICE_VERSION } from '@credential-service/server-kit'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, startAllInOne } from './harness'

// Issue 11 "Hardening", S-122 and S-112: size refusals and the 503 of a closing server answer in
// the shape of the route, problem+json on /api and OAuth JSON on protocol routes, also when
// node:http refuses the request before Fastify sees it. These need a listening server: inject()
// never goes through the HTTP parser.

const LIMITS = { BODY_LIMIT_BYTES: '65536', HEADER_LIMIT_BYTES: '8192', URL_LIMIT_BYTES: '2048' }
const PROBLEM_JSON = 'application/problem+json; charset=utf-8'
const OAUTH_JSON = 'application/json; charset=utf-8'

interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** Reads one HTTP/1.1 response (Content-Length framed) from a socket. */
function readResponse(socket: Socket): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0)
    const done = (response: RawResponse) => {
      socket.destroy()
      resolve(response)
    }
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      const end = buffer.indexOf('\r\n\r\n')
      if (end === -1) return
      const [statusLine, ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n')
      const headers = Object.fromEntries(
        lines.map((line) => {
          const colon = line.indexOf(':')
          return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
        }),
      )
      const body = buffer.subarray(end + 4)
      if (body.length < Number(headers['content-length'] ?? 0)) return
      done({ status: Number(statusLine?.split(' ')[1]), headers, body: body.toString('utf8') })
    })
    socket.on('error', reject)
    socket.on('close', () => reject(new Error(`closed before a full response: ${buffer.toString('latin1')}`)))
  })
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket))
    socket.on('error', reject)
  })
}

/** Sends raw bytes in one write and reads the answer. */
async function raw(port: number, request: string | Buffer): Promise<RawResponse> {
  const socket = await open(port)
  const response = readResponse(socket)
  socket.write(request)
  return response
}

const head = (method: string, target: string, headers: Record<string, string> = {}) =>
  `${method} ${target} HTTP/1.1\r\nHost: localhost\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}`

const problemOf = (code: string, title: string, status: number, instance?: string) => ({
  type: `${PROBLEM_TYPE_BASE}${code.replaceAll('_', '-')}`,
  title,
  status,
  detail: expect.any(String),
  ...(instance === undefined ? {} : { instance }),
  code,
})

describe.each(testDatabases())('S-122: request limits over a listening server on $name', (testDatabase) => {
  let app: FastifyInstance
  let port: number
  let root: Record<string, string>
  const tenant = `lim-${crypto.randomUUID().slice(0, 8)}`

  beforeAll(async () => {
    const started = await startAllInOne(testDatabase, 'http://localhost:3000', LIMITS)
    app = started.app
    await app.listen({ host: '127.0.0.1', port: 0 })
    port = (app.server.address() as { port: number }).port
    root = await bearer(app, started.rootClientId, started.rootSecret)
    await app.inject({
      method: 'POST',
      url: '/api/tenants',
      headers: root,
      payload: { id: tenant, name: tenant },
    })
  })
  afterAll(() => app.close())

  function expectAnswer(response: RawResponse, status: number, contentType: string, body: unknown) {
    expect(response.status, response.body).toBe(status)
    expect(response.headers['content-type']).toBe(contentType)
    expect(response.headers['x-service-version']).toBe(SERVICE_VERSION)
    expect(JSON.parse(response.body)).toStrictEqual(body)
  }

  describe('413: body beyond BODY_LIMIT_BYTES', () => {
    const big = JSON.stringify({ name: 'n', description: 'x'.repeat(70_000) })

    it('S-122, RFC 9457: on /api a problem', async () => {
      const response = await raw(
        port,
        `${head('POST', '/api/tenants', {
          authorization: root.authorization as string,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(big)),
        })}\r\n${big}`,
      )
      expectAnswer(
        response,
        413,
        PROBLEM_JSON,
        problemOf('payload_too_large', 'Payload too large', 413, '/api/tenants'),
      )
    })

    it('S-122: a chunked body that grows beyond the limit is a 413 too', async () => {
      const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`
      const response = await raw(
        port,
        `${head('POST', '/api/tenants', {
          authorization: root.authorization as string,
          'content-type': 'application/json',
          'transfer-encoding': 'chunked',
        })}\r\n${chunk(big.slice(0, 40_000))}${chunk(big.slice(40_000))}0\r\n\r\n`,
      )
      expectAnswer(
        response,
        413,
        PROBLEM_JSON,
        problemOf('payload_too_large', 'Payload too large', 413, '/api/tenants'),
      )
    })

    it('S-122, RFC 6749 §5.2: on a protocol route an OAuth error', async () => {
      const form = `grant_type=x&pre-authorized_code=${'x'.repeat(70_000)}`
      const response = await raw(
        port,
        `${head('POST', `/issuers/${tenant}/token`, {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': String(form.length),
        })}\r\n${form}`,
      )
      expectAnswer(response, 413, OAUTH_JSON, {
        error: 'invalid_request',
        error_description: expect.any(String),
      })
      expect(response.headers['cache-control']).toBe('no-store')
    })

    it('a body at the limit is still read (the limit is not off by one)', async () => {
      const body = JSON.stringify({ name: 'n', description: 'x'.repeat(1000) })
      const padded = body.padEnd(65_536, ' ')
      const response = await raw(
        port,
        `${head('PATCH', `/api/tenants/${tenant}`, {
          authorization: root.authorization as string,
          'content-type': 'application/json',
          'content-length': String(padded.length),
          connection: 'close',
        })}\r\n${padded}`,
      )
      expect(response.status, response.body).toBe(200)
    })
  })

  describe('414: URI beyond URL_LIMIT_BYTES', () => {
    it('S-122, RFC 9457: on /api a problem, below the header limit (answered by Fastify)', async () => {
      const response = await raw(port, `${head('GET', `/api/health?pad=${'a'.repeat(3000)}`)}\r\n`)
      expectAnswer(response, 414, PROBLEM_JSON, problemOf('uri_too_long', 'URI too long', 414, '/api/health'))
    })

    it('S-122, RFC 9457: on /api a problem, beyond the header limit (answered for node:http)', async () => {
      const response = await raw(port, `${head('GET', `/api/health?pad=${'a'.repeat(10_000)}`)}\r\n`)
      expectAnswer(response, 414, PROBLEM_JSON, problemOf('uri_too_long', 'URI too long', 414, '/api/health'))
      expect(response.headers.connection).toBe('close')
    })

    it('S-122, RFC 6749 §5.2: on a protocol route an OAuth error, both below and beyond the header limit', async () => {
      for (const length of [3000, 10_000]) {
        const response = await raw(
          port,
          `${head('GET', `/issuers/${tenant}/offers/x?pad=${'a'.repeat(length)}`)}\r\n`,
        )
        expectAnswer(response, 414, OAUTH_JSON, {
          error: 'invalid_request',
          error_description: expect.any(String),
        })
      }
    })
  })

  describe('431: headers beyond HEADER_LIMIT_BYTES (answered for node:http)', () => {
    it('S-122, RFC 9457: on /api a problem', async () => {
      const response = await raw(port, `${head('GET', '/api/health', { 'x-pad': 'a'.repeat(9000) })}\r\n`)
      expectAnswer(
        response,
        431,
        PROBLEM_JSON,
        problemOf('headers_too_large', 'Request header fields too large', 431, '/api/health'),
      )
    })

    it('S-122, RFC 6749 §5.2: on a protocol route an OAuth error', async () => {
      const response = await raw(
        port,
        `${head('POST', `/issuers/${tenant}/nonce`, { cookie: 'a'.repeat(9000) })}\r\n`,
      )
      expectAnswer(response, 431, OAUTH_JSON, {
        error: 'invalid_request',
        error_description: expect.any(String),
      })
    })

    it('headers below the limit still pass', async () => {
      const response = await raw(
        port,
        `${head('GET', '/api/health', { 'x-pad': 'a'.repeat(4000), connection: 'close' })}\r\n`,
      )
      expect(response.status).toBe(200)
    })
  })

  it('S-12, S-112: a NUL in a header is refused by node:http as a 400 problem, not an empty answer', async () => {
    const response = await raw(port, `${head('GET', '/api/health', { 'x-probe': 'a\u0000b' })}\r\n`)
    expectAnswer(
      response,
      400,
      PROBLEM_JSON,
      problemOf('malformed_request', 'Malformed request', 400, '/api/health'),
    )
  })
})

describe.each(testDatabases())(
  'S-112: a closing server answers 503 in the shape of the route on $name',
  (testDatabase) => {
    let app: FastifyInstance
    let port: number

    // Started in a hook: the test closes the server itself.
    beforeAll(async () => {
      ;({ app } = await startAllInOne(testDatabase))
      await app.listen({ host: '127.0.0.1', port: 0 })
      port = (app.server.address() as { port: number }).port
    })

    it('requests that arrive while the server closes get 503: problem+json on /api, OAuth JSON elsewhere', async () => {
      // Requests already on the wire when close() starts: a started request keeps its connection
      // open (node:http only drops idle ones), and its last header line arrives during the close.
      const api = await open(port)
      const protocol = await open(port)
      const answers = [readResponse(api), readResponse(protocol)]
      api.write(head('GET', '/api/health'))
      protocol.write(head('POST', '/issuers/any/nonce'))
      await new Promise((resolve) => setTimeout(resolve, 50))
      const closed = app.close()
      // server.close() runs after the preClose hooks: once the server stops listening, it is closing.
      for (let waited = 0; app.server.listening && waited < 5000; waited += 10) {
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      api.write('\r\n')
      protocol.write('\r\n')
      const [apiAnswer, protocolAnswer] = (await Promise.all(answers)) as [RawResponse, RawResponse]
      await closed

      expect(apiAnswer.status).toBe(503)
      expect(apiAnswer.headers['content-type']).toBe(PROBLEM_JSON)
      expect(apiAnswer.headers.connection).toBe('close')
      // Issue 19: every 503 says when to come back; another process answers at once.
      expect(apiAnswer.headers['retry-after']).toBe('1')
      expect(JSON.parse(apiAnswer.body)).toStrictEqual(
        problemOf('service_unavailable', 'Service unavailable', 503, '/api/health'),
      )
      expect(protocolAnswer.status).toBe(503)
      expect(protocolAnswer.headers['content-type']).toBe(OAUTH_JSON)
      expect(protocolAnswer.headers.connection).toBe('close')
      expect(protocolAnswer.headers['retry-after']).toBe('1')
      expect(JSON.parse(protocolAnswer.body)).toStrictEqual({
        error: 'temporarily_unavailable',
        error_description: expect.any(String),
      })
    })
  },
)

describe('S-122: docker/nginx.conf', () => {
  const nginx = readFileSync(new URL('../../../docker/nginx.conf', import.meta.url), 'utf8')
  const bytes = (size: string) =>
    Number.parseInt(size, 10) * ({ k: 1024, m: 1024 * 1024 }[size.at(-1) as string] ?? 1)

  it('lets through larger bodies and headers than the apps allow, so the app answers in its own shape', () => {
    const body = /client_max_body_size (\w+);/.exec(nginx)?.[1] as string
    const headerBuffer = /large_client_header_buffers \d+ (\w+);/.exec(nginx)?.[1] as string
    expect(bytes(body)).toBeGreaterThan(DEFAULT_HTTP_LIMITS.bodyBytes)
    expect(bytes(headerBuffer)).toBeGreaterThan(DEFAULT_HTTP_LIMITS.headerBytes)
  })
})
