import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { z } from 'zod'
import { RETRY_ELSEWHERE_SECONDS } from './drain'
import type { zCommonEnv } from './env'
import { refusalBody } from './error-handlers'
import { SERVICE_VERSION } from './version'

/** Size limits of a request, each answered with its own status (S-122). */
export interface HttpLimits {
  /** Largest request body: 413 beyond it (Fastify `bodyLimit`). */
  bodyBytes: number
  /** Largest request line plus header fields: 431 beyond it (node:http `maxHeaderSize`). */
  headerBytes: number
  /** Longest request target (path and query): 414 beyond it. Below `headerBytes` to be reachable. */
  urlBytes: number
}

export const DEFAULT_HTTP_LIMITS: Readonly<HttpLimits> = Object.freeze({
  bodyBytes: 1024 * 1024,
  headerBytes: 16 * 1024,
  urlBytes: 8 * 1024,
})

/** The limits of BODY_LIMIT_BYTES, HEADER_LIMIT_BYTES and URL_LIMIT_BYTES. */
export function httpLimits(
  config: Pick<z.output<typeof zCommonEnv>, 'BODY_LIMIT_BYTES' | 'HEADER_LIMIT_BYTES' | 'URL_LIMIT_BYTES'>,
): HttpLimits {
  return {
    bodyBytes: config.BODY_LIMIT_BYTES,
    headerBytes: config.HEADER_LIMIT_BYTES,
    urlBytes: config.URL_LIMIT_BYTES,
  }
}

/** How long a refused connection still reads what the client sends before it is dropped. */
const LINGER_MS = 2000

/** An error the route's error handler renders by its status (see `LIMITS` in error-handlers). */
function refusal(status: number, message: string): Error {
  return Object.assign(new Error(message), { statusCode: status })
}

/**
 * 414 for a request target longer than `urlBytes`, and 503 for any request that arrives while the
 * server closes (in place of Fastify's own `return503OnClosing` body, which is neither problem+json
 * nor OAuth JSON). Both are thrown, so the route's error handler renders them in its shape.
 */
export function registerHttpLimits(app: FastifyInstance, limits: HttpLimits): void {
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  app.addHook('onRequest', async (request, reply) => {
    if (closing) {
      // A keep-alive client must open a new connection, which the balancer sends to another pod.
      reply.header('connection', 'close').header('retry-after', RETRY_ELSEWHERE_SECONDS)
      throw refusal(503, 'the server is closing')
    }
    if ((request.raw.url ?? '').length > limits.urlBytes) throw refusal(414, 'the request URI is too long')
  })
}

// A request line in origin form, as node:http accepts it: `GET /path?query HTTP/1.1`.
const REQUEST_LINE = /^[A-Z]+ (\/\S*)/

/**
 * Answers what node:http refuses before Fastify sees a request (headers beyond `maxHeaderSize`,
 * a malformed request, a timeout), in the same shapes as the routes: problem+json under `/api`
 * and when the path cannot be read, OAuth JSON on protocol paths. node:http counts the request
 * line towards `maxHeaderSize`, so an overflow inside the request line is a 414, not a 431.
 */
export function clientErrorHandler(limits: HttpLimits) {
  return function answer(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
    // A reset connection has no one to answer; an answered one keeps failing to parse while it lingers.
    if (error.code === 'ECONNRESET' || socket.destroyed || socket.writableEnded) return
    // node:http attaches the chunk it failed on.
    const packet = (error as { rawPacket?: unknown }).rawPacket
    const raw = Buffer.isBuffer(packet) ? packet : undefined
    const text = raw ? raw.toString('latin1', 0, Math.min(raw.length, limits.headerBytes + 64)) : ''
    const target = REQUEST_LINE.exec(text)?.[1]
    const lineEnd = raw ? raw.indexOf('\r\n') : -1
    const status = statusOf(error.code, target !== undefined && (lineEnd === -1 || lineEnd > limits.urlBytes))
    this.log.info({ code: error.code, status }, 'request refused by the HTTP parser')
    if (!socket.writable) {
      socket.destroy()
      return
    }
    // The path decides the shape; a truncated one is not echoed as the problem's instance.
    const path = target?.split('?')[0]
    const { contentType, body } = refusalBody(status, path, { echo: lineEnd !== -1 })
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `Content-Type: ${contentType}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Cache-Control: no-store\r\n' +
        `X-Service-Version: ${SERVICE_VERSION}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    )
    // Lingering close: dropping a socket with unread input makes the kernel send a reset, which
    // can discard the answer before the client reads it. Keep reading for a moment instead.
    const timer = setTimeout(() => socket.destroy(), LINGER_MS)
    timer.unref()
    socket.once('close', () => clearTimeout(timer))
  }
}

function statusOf(code: string | undefined, inRequestLine: boolean): number {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return inRequestLine ? 414 : 431
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 408
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 413
    default:
      return 400
  }
}
