/**
 * The last event of a session stream whose access token expired. The SDK's stream methods open
 * the stream again with a fresh token and `Last-Event-ID` and do not pass this event on.
 */
export const TOKEN_EXPIRED_EVENT = 'token-expired'

/** One Server-Sent Event as the stream carried it (WHATWG HTML §9.2, "event stream interpretation"). */
export interface ServerSentEvent {
  /** `message` when the stream named none. */
  event: string
  data: string
  /** The last `id` the stream set (send it back as `lastEventId` to resume). */
  id: string | undefined
}

/**
 * The events of a `text/event-stream` body, as they arrive. Comments (keep-alives) and `retry`
 * are skipped; an event without `data` is not dispatched, as in browsers.
 */
export async function* readEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder()
  let buffer = ''
  let data: string[] = []
  let event = ''
  let id: string | undefined
  const reader = body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true })
      // A line ends at CRLF, LF or CR; a CR at the very end may be the first half of a CRLF.
      for (let end = lineEnd(buffer, done); end >= 0; end = lineEnd(buffer, done)) {
        const line = buffer.slice(0, end)
        buffer = buffer.slice(buffer[end] === '\r' && buffer[end + 1] === '\n' ? end + 2 : end + 1)
        if (line === '') {
          if (data.length) yield { event: event || 'message', data: data.join('\n'), id }
          data = []
          event = ''
          continue
        }
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const field = colon < 0 ? line : line.slice(0, colon)
        const value = colon < 0 ? '' : line.slice(line[colon + 1] === ' ' ? colon + 2 : colon + 1)
        if (field === 'data') data.push(value)
        else if (field === 'event') event = value
        else if (field === 'id' && !value.includes('\0')) id = value
      }
      if (done) return
    }
  } finally {
    reader.releaseLock()
    await body.cancel().catch(() => {})
  }
}

function lineEnd(buffer: string, done: boolean): number {
  const lf = buffer.indexOf('\n')
  const cr = buffer.indexOf('\r')
  if (cr < 0) return lf
  if (cr === buffer.length - 1 && !done) return lf >= 0 && lf < cr ? lf : -1
  return lf >= 0 && lf < cr ? lf : cr
}
