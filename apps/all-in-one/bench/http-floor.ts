/**
 * The HTTP floor (issue 20): the server CPU of one bare request over the same loopback and client
 * as the flows, at the same concurrency. A flow's ceiling (ceiling.ts) has no HTTP at all, yet a
 * wallet cannot run a flow without its requests: the protocol's floor is the ceiling plus one bare
 * request per request the flow sends. The server is `node:http` with nothing on top: read the
 * body, parse it as JSON, answer a small JSON document.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { cpuMs } from './proc'

const BARE_SERVER = `
const http = require('node:http')
const answer = JSON.stringify({ access_token: 'x'.repeat(400), token_type: 'DPoP', expires_in: 300 })
http.createServer((req, res) => {
  let body = ''
  req.setEncoding('utf8')
  req.on('data', (chunk) => { body += chunk })
  req.on('end', () => {
    if (body) JSON.parse(body)
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    res.end(answer)
  })
}).listen(0, '127.0.0.1', function () { process.stdout.write(String(this.address().port) + '\\n') })
`

const REQUEST_BODY = JSON.stringify({
  proofs: { jwt: ['x'.repeat(600)] },
  credential_configuration_id: 'pid',
})

/** Server CPU milliseconds per bare request at each concurrency level, median of three rounds. */
export async function measureHttpFloor(levels: number[], requests: number): Promise<Map<number, number>> {
  const server = spawn(process.execPath, ['-e', BARE_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const [line] = (await once(server.stdout, 'data')) as [Buffer]
    const url = `http://127.0.0.1:${line.toString().trim()}/token`
    const send = async () => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: REQUEST_BODY,
      })
      await response.json()
    }
    const run = async (concurrency: number, count: number) => {
      let next = 0
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next++ < count) await send()
        }),
      )
    }
    await run(8, requests) // warm-up: JIT on both sides, connections open
    const floors = new Map<number, number>()
    for (const concurrency of levels) {
      const rounds: number[] = []
      for (let round = 0; round < 3; round++) {
        const before = cpuMs(server.pid as number)
        await run(concurrency, requests)
        rounds.push((cpuMs(server.pid as number) - before) / requests)
      }
      floors.set(concurrency, rounds.sort((a, b) => a - b)[1] as number)
    }
    return floors
  } finally {
    server.kill()
  }
}
