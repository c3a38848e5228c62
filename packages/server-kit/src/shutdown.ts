import type { FastifyInstance } from 'fastify'

/** How long closing may take once the drain is over: in-flight requests, then the pool. */
export const CLOSE_BOUND_MS = 10_000

/**
 * SIGTERM (an orchestrator's stop) drains first: for `drainMs` the process still serves while
 * `/readyz` answers 503 and responses close their connections, so that balancers stop routing
 * here before the port closes. Then the server stops accepting, closes idle connections,
 * finishes in-flight requests, closes the pool (onClose) and the process exits 0. SIGINT
 * (Ctrl-C), or a second signal, skips what is left of the drain. Past `drainMs + CLOSE_BOUND_MS`
 * the process exits 1, before the orchestrator's SIGKILL (terminationGracePeriodSeconds).
 */
export function onShutdownSignal(server: FastifyInstance, drainMs: number): void {
  let stage: 'serving' | 'draining' | 'closing' = 'serving'
  let drainTimer: NodeJS.Timeout | undefined
  const close = () => {
    stage = 'closing'
    clearTimeout(drainTimer)
    // node:http's close() also closes idle keep-alive connections (Node ≥ 19).
    server.close().then(
      () => process.exit(0),
      (error) => {
        server.log.error({ err: error }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  // `on`, not `once`: a second signal while closing (Ctrl-C reaches both `npm start` and this
  // process, and `npm start` forwards it) must not fall back to the default abrupt exit.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stage === 'draining') close()
      if (stage !== 'serving') return
      stage = 'draining'
      const drain = signal === 'SIGTERM' ? drainMs : 0
      server.log.info({ signal, drainSeconds: drain / 1000 }, 'shutting down: draining, then closing')
      setTimeout(() => {
        server.log.error(`shutdown took longer than ${(drain + CLOSE_BOUND_MS) / 1000} s; exiting`)
        process.exit(1)
      }, drain + CLOSE_BOUND_MS).unref()
      server.startDraining()
      drainTimer = setTimeout(close, drain)
    })
  }
}
