import type { FastifyInstance } from 'fastify'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Starts the drain before a shutdown: `/readyz` answers 503, so balancers stop sending new
     * requests here, and every response closes its connection, while requests are still served.
     */
    startDraining(): void
    /** Whether {@link FastifyInstance.startDraining} was called. */
    readonly draining: boolean
  }
}

/** `Retry-After` of a 503 that only says "not this process": another one answers at once. */
export const RETRY_ELSEWHERE_SECONDS = 1

export function registerDrain(app: FastifyInstance): void {
  let draining = false
  app.decorate('startDraining', () => {
    draining = true
  })
  app.decorate('draining', {
    getter: () => draining,
  })
  // onSend, not onRequest: a request that arrived before the drain must not keep its connection
  // either, or a keep-alive client would send its next request to a process about to close.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining) reply.header('connection', 'close')
    done(null, payload)
  })
}
