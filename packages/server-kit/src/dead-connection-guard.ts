import { isDeadConnectionError } from '@credential-service/db-schema'

interface WarnLog {
  warn(details: object, message: string): void
}

/**
 * Defence in depth behind the driver patch (issue 36): an error postgres.js raises on a dead
 * connection outside any request would end the process, and with it every request it serves.
 * Such an error is logged once at warn and the process lives on; the pool reconnects on its own.
 * Any other uncaught exception or unhandled rejection still ends the process with status 1, as
 * Node.js does by default.
 */
export function guardDeadConnectionErrors(log: WarnLog): void {
  let warned = false
  process.on('uncaughtException', (error, origin) => {
    if (isDeadConnectionError(error)) {
      if (!warned) log.warn({ err: error, origin }, 'database driver error on a closed connection ignored')
      warned = true
      return
    }
    const what = origin === 'unhandledRejection' ? 'Unhandled rejection' : 'Uncaught exception'
    process.stderr.write(`${what}: ${error instanceof Error ? error.stack : String(error)}\n`)
    process.exit(1)
  })
}
