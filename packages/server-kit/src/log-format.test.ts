import { Writable } from 'node:stream'
import { stripVTControlCharacters } from 'node:util'
import { describe, expect, it } from 'vitest'
import { createServer } from './create-server'
import { type LogFormat, logStreamFor } from './log-format'

/** A stdout stand-in: a terminal or not, keeping what is written. */
function output(isTTY: boolean) {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk))
      done()
    },
  })
  return Object.assign(stream, { isTTY, chunks })
}

/** The lines a server writes for one warning, with LOG_FORMAT `format` on `out`. */
async function linesOf(format: LogFormat, out: ReturnType<typeof output>) {
  const stream = await logStreamFor(format, out)
  const app = await createServer({
    logLevel: 'info',
    ping: async () => true,
    apps: [],
    logStream: stream ?? { write: (line: string) => out.write(line) },
  })
  app.log.warn({ tenantId: 'acme' }, 'the registrar did not answer')
  await app.close()
  return out.chunks.join('').split('\n').filter(Boolean)
}

describe('issue 23 item 5: LOG_FORMAT', () => {
  it('auto on a terminal: readable lines (time, level, message, fields), not JSON', async () => {
    const lines = await linesOf('auto', output(true))
    const warning = lines.find((line) => line.includes('the registrar did not answer')) as string
    expect(warning).toContain('\u001b[') // coloured on a terminal
    const plain = stripVTControlCharacters(warning)
    expect(plain).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: the registrar did not answer/)
    expect(() => JSON.parse(warning)).toThrow()
    expect(stripVTControlCharacters(lines.join('\n'))).toMatch(/tenantId: "acme"/)
  })

  it('auto when stdout is not a terminal (containers, pipes), and json anywhere: one JSON object per line', async () => {
    for (const [format, tty] of [
      ['auto', false],
      ['json', true],
    ] as const) {
      expect(await logStreamFor(format, output(tty))).toBeUndefined()
      const lines = await linesOf(format, output(tty))
      const warning = lines
        .map((line) => JSON.parse(line))
        .find((l) => l.msg === 'the registrar did not answer')
      expect(warning).toMatchObject({ level: 40, tenantId: 'acme' })
    }
  })

  it('pretty into a pipe: readable lines without colour codes', async () => {
    const lines = await linesOf('pretty', output(false))
    const warning = lines.find((line) => line.includes('the registrar did not answer'))
    expect(warning).toMatch(/WARN/)
    expect(warning).not.toContain('\u001b[')
  })
})
