import { Agent, createServer, request } from 'node:http'
import { freePort } from './free-port'
import type { ServiceProcess } from './processes'

export interface BalancerAnswer {
  path: string
  status: number
  retryAfter: string | undefined
  /** Why the balancer answered itself (no backend, a reset or refused connection). */
  error?: string
}

/**
 * An ingress in front of a deployment's processes: `/api` to management, `/verifiers/` to the
 * verifiers, the rest to the issuers, round robin over the ones whose `/readyz` answers 200
 * (polled every 250 ms; out after 3 failed polls in a row, as a readiness probe's
 * failureThreshold), with keep-alive and no retry. Every answer is kept in `answers`.
 */
export async function startReadinessBalancer() {
  const port = await freePort()
  const agent = new Agent({ keepAlive: true })
  const answers: BalancerAnswer[] = []
  const failedPolls = new Map<string, number>()
  const pools = new Map<string, string[]>()
  let polling = true
  let turn = 0

  const poll = async (backend: string) => {
    while (polling) {
      const status = await fetch(`${backend}/readyz`, { signal: AbortSignal.timeout(1000) }).then(
        (response) => response.status,
        () => 0,
      )
      failedPolls.set(backend, status === 200 ? 0 : (failedPolls.get(backend) ?? 0) + 1)
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  }
  const pick = (path: string) => {
    const app = path.startsWith('/api')
      ? 'management'
      : path.startsWith('/verifiers/')
        ? 'verifier'
        : 'issuer'
    const pool = pools.get(app) ?? []
    const ready = pool.filter((backend) => (failedPolls.get(backend) ?? 0) < 3)
    // None ready: every one of the pool, as Envoy's panic threshold does, so that the client
    // gets the processes' own answer (a 503 with Retry-After) rather than the balancer's.
    const candidates = ready.length ? ready : pool
    return candidates[turn++ % candidates.length]
  }

  const server = createServer((incoming, outgoing) => {
    const path = incoming.url ?? '/'
    const answered = (status: number, retryAfter: string | undefined, error?: string) =>
      answers.push({ path, status, retryAfter, ...(error ? { error } : {}) })
    const target = pick(path)
    if (!target) {
      answered(502, undefined, 'no ready backend')
      outgoing.writeHead(502).end()
      return
    }
    const { connection: _, 'keep-alive': __, ...headers } = incoming.headers
    const upstream = request(`${target}${path}`, { method: incoming.method, headers, agent }, (answer) => {
      const retryAfter = answer.headers['retry-after']
      answered(answer.statusCode ?? 502, Array.isArray(retryAfter) ? retryAfter[0] : retryAfter)
      const { connection: _c, 'keep-alive': _k, ...back } = answer.headers
      outgoing.writeHead(answer.statusCode ?? 502, back)
      answer.pipe(outgoing)
    })
    upstream.on('error', (error: Error & { code?: string }) => {
      answered(502, undefined, error.code ?? error.message)
      if (!outgoing.headersSent) outgoing.writeHead(502)
      outgoing.end()
    })
    incoming.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))

  return {
    origin: `http://127.0.0.1:${port}`,
    answers,
    /** Sends traffic to these processes from now on, by their app. */
    route(processes: ServiceProcess[]) {
      for (const process of processes) {
        pools.set(process.app, [...(pools.get(process.app) ?? []), process.origin])
        void poll(process.origin)
      }
    },
    async close() {
      polling = false
      agent.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
