import { connect, createServer, type Server, type Socket } from 'node:net'

// PostgreSQL frontend/backend protocol 3.0 (PostgreSQL docs, "Message Formats"): the request codes
// a client may send before its StartupMessage, in the place of the protocol version.
const SSL_REQUEST = 80877103
const GSSENC_REQUEST = 80877104
const CANCEL_REQUEST = 80877102

/** An ErrorResponse ('E') or NoticeResponse ('N'): typed fields, each a NUL-terminated string. */
function fieldMessage(type: 'E' | 'N', fields: Record<string, string>): Buffer {
  const body = Buffer.concat([
    ...Object.entries(fields).map(([code, value]) => Buffer.from(`${code}${value}\0`)),
    Buffer.from([0]),
  ])
  const header = Buffer.alloc(5)
  header.write(type, 0)
  header.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([header, body])
}

interface Session {
  /** Sends `message` after the last whole server message, then closes both sides. */
  end(message: Buffer): void
}

export interface PostgresFront {
  /** `postgres://…` of the front, with the user, password and database of `target`. */
  url: string
  /**
   * Answers every new connection's StartupMessage with `FATAL 57P03 <message>` and closes, as a
   * server does while it starts up or recovers ("the database system is starting up", "… is in
   * recovery mode"); undefined accepts connections again.
   */
  refuse(message: string | undefined): void
  /**
   * A fast shutdown: every open session gets `FATAL 57P01 terminating connection due to
   * administrator command` and is closed.
   */
  shutDown(): void
  /**
   * A crash of another backend: every open session gets the WARNING 57P02 of `quickdie()`
   * (PostgreSQL sends it as a notice, not an error) and is closed.
   */
  crash(): void
  close(): Promise<void>
}

/**
 * A PostgreSQL server's front door, faithful to the wire protocol where it matters here: it reads
 * the startup packet itself (answering `N` to an SSLRequest or GSSENCRequest), and either refuses
 * the connection as a server that is starting up does, or hands the connection to the real
 * server at `target`. It forwards the server's messages whole, so that it can end a session
 * between two messages with what a server sends when it shuts down or crashes.
 */
export async function startPostgresFront(
  target: string,
  options: { /** Listen on this port (default: any free one). */ port?: number } = {},
): Promise<PostgresFront> {
  const upstreamUrl = new URL(target)
  const sessions = new Set<Session>()
  const sockets = new Set<Socket>()
  let refusal: string | undefined

  const server: Server = createServer((client) => {
    client.on('error', () => {})
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    let buffer = Buffer.alloc(0)
    const onStartup = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      while (buffer.length >= 8) {
        const length = buffer.readInt32BE(0)
        if (buffer.length < length) return
        const code = buffer.readInt32BE(4)
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          // Unencrypted only: the client then sends its StartupMessage in the clear.
          buffer = buffer.subarray(length)
          client.write('N')
          continue
        }
        client.off('data', onStartup)
        if (refusal !== undefined) {
          // ProcessStartupPacket: a cancel gets no answer; a startup gets the FATAL, then EOF.
          if (code === CANCEL_REQUEST) client.end()
          else {
            client.end(
              fieldMessage('E', {
                S: 'FATAL',
                V: 'FATAL',
                C: '57P03',
                M: refusal,
                R: 'ProcessStartupPacket',
              }),
            )
          }
          return
        }
        forward(client, buffer)
        return
      }
    }
    client.on('data', onStartup)
  })

  function forward(client: Socket, startup: Buffer) {
    const upstream = connect(Number(upstreamUrl.port || 5432), upstreamUrl.hostname)
    upstream.on('error', () => client.destroy())
    upstream.write(startup)
    client.pipe(upstream)
    // The server's messages are forwarded whole: type byte, then a length that counts itself.
    let pending = Buffer.alloc(0)
    let ended = false
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk])
      let whole = 0
      while (pending.length - whole >= 5) {
        const size = 1 + pending.readInt32BE(whole + 1)
        if (pending.length - whole < size) break
        whole += size
      }
      if (whole > 0 && !ended) client.write(pending.subarray(0, whole))
      pending = pending.subarray(whole)
    })
    const session: Session = {
      end(message) {
        ended = true
        client.unpipe(upstream)
        upstream.destroy()
        client.end(message)
      },
    }
    sessions.add(session)
    const done = () => {
      sessions.delete(session)
      if (!ended) {
        ended = true
        client.end()
        upstream.end()
      }
    }
    upstream.on('close', done)
    client.on('close', done)
  }

  const endAll = (message: Buffer) => {
    for (const session of [...sessions]) session.end(message)
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve))
  const address = server.address()
  const url = new URL(target)
  url.hostname = '127.0.0.1'
  url.port = String(typeof address === 'object' && address ? address.port : 0)
  return {
    url: url.href,
    refuse(message) {
      refusal = message
    },
    shutDown: () =>
      endAll(
        fieldMessage('E', {
          S: 'FATAL',
          V: 'FATAL',
          C: '57P01',
          M: 'terminating connection due to administrator command',
          R: 'ProcessInterrupts',
        }),
      ),
    crash: () =>
      endAll(
        fieldMessage('N', {
          S: 'WARNING',
          V: 'WARNING',
          C: '57P02',
          M: 'terminating connection because of crash of another server process',
          H: 'In a moment you should be able to reconnect to the database and repeat your command.',
          R: 'quickdie',
        }),
      ),
    async close() {
      refusal = 'the database system is shutting down'
      endAll(Buffer.alloc(0))
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
