import { describe, expect, it } from 'vitest'
import { readEventStream, type ServerSentEvent } from '../src/events'

/** A body delivered in the given chunks. */
function body(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk))
      controller.close()
    },
  })
}

async function read(stream: ReadableStream<Uint8Array>): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = []
  for await (const event of readEventStream(stream)) events.push(event)
  return events
}

describe('readEventStream (WHATWG HTML §9.2.6 event stream interpretation)', () => {
  it('dispatches at blank lines; keeps the last id; skips comments and retry; joins data lines', async () => {
    expect(
      await read(
        body(
          'retry: 2000\n\n: keep-alive\n\nid: 1\nevent: session\ndata: {"a":1}\n\n',
          'data: x\ndata:y\n\n',
        ),
      ),
    ).toStrictEqual([
      { event: 'session', data: '{"a":1}', id: '1' },
      { event: 'message', data: 'x\ny', id: '1' },
    ])
  })

  it('reads lines split across chunks, CRLF and CR line ends (a CRLF split between chunks too)', async () => {
    expect(
      await read(body('id: 7\r', '\nevent: se', 'ssion\rdata: {"b"', ':2}\r\n\r', '\n', 'data: last\n\n')),
    ).toStrictEqual([
      { event: 'session', data: '{"b":2}', id: '7' },
      { event: 'message', data: 'last', id: '7' },
    ])
  })

  it('does not dispatch an event without data, nor one the stream cut off before its blank line', async () => {
    expect(await read(body('event: deleted\n\n', 'data: cut'))).toStrictEqual([])
  })

  it('multi-byte characters split between chunks are decoded whole', async () => {
    const bytes = new TextEncoder().encode('data: Jürgen\n\n')
    const split = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 8))
        controller.enqueue(bytes.slice(8))
        controller.close()
      },
    })
    expect(await read(split)).toStrictEqual([{ event: 'message', data: 'Jürgen', id: undefined }])
  })
})
