import { databaseRefusal, isDatabaseUnavailable } from '@credential-service/db-schema'

const FIRST_DELAY_MS = 500
const MAX_DELAY_MS = 8000

export interface MigrateAtStartOptions {
  /** The process, first word of each line. */
  name: string
  /** `DATABASE_URL`; only its host, port and database name are ever printed. */
  url: string
  migrate: () => Promise<void>
  /** DATABASE_STARTUP_TIMEOUT_SECONDS: how long an unreachable database is retried. */
  timeoutSeconds: number
  /** One line per failed attempt and for giving up (stderr in a process). */
  log: (line: string) => void
  sleep?: (ms: number) => Promise<void>
  now?: () => number
}

/** Why the database could not be used: no stack, no credentials. */
export class DatabaseStartupError extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options)
    this.name = 'DatabaseStartupError'
  }
}

/** `host:port/database` of a PostgreSQL URL. */
function whereOf(url: string): string {
  const parsed = new URL(url)
  return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`
}

type Chain = { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown; severity?: unknown }

/** The first coded error of the chain, as `message (code)`; a refusal PostgreSQL gave, as docs/operations.md names it. */
function reasonOf(error: unknown): string {
  const refusal = databaseRefusal(error)
  if (refusal) return refusal
  for (let current = error as Chain | undefined, depth = 0; current && depth < 8; depth++) {
    // A host with several addresses fails with an AggregateError of each attempt (no message).
    const inner = Array.isArray(current.errors) ? (current.errors[0] as Chain | undefined) : undefined
    const coded = typeof current.code === 'string' ? current : inner
    if (coded && typeof coded.code === 'string') {
      const message = typeof coded.message === 'string' && coded.message ? `${coded.message} ` : ''
      return `${message}(${coded.code})`
    }
    current = current.cause as Chain | undefined
  }
  return error instanceof Error ? error.message : String(error)
}

/** A FATAL refusal that waiting does not mend: a wrong password, a database that does not exist. */
function isFatalRefusal(error: unknown): boolean {
  for (let current = error as Chain | undefined, depth = 0; current && depth < 8; depth++) {
    if (current.severity === 'FATAL') return true
    current = current.cause as Chain | undefined
  }
  return false
}

/**
 * Applies the migrations at start, waiting for a database that does not answer yet (a pod that
 * starts before PostgreSQL, or during its restart): one line per attempt, retried with backoff
 * (0.5 s doubling to 8 s) for `timeoutSeconds`, then a {@link DatabaseStartupError}. A refusal
 * that waiting does not mend fails at once, as does any other error (a failed migration) as thrown.
 */
export async function migrateAtStart(options: MigrateAtStartOptions): Promise<void> {
  const sleep = options.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)))
  const now = options.now ?? Date.now
  const where = whereOf(options.url)
  const deadline = now() + options.timeoutSeconds * 1000
  for (let attempt = 1, delay = FIRST_DELAY_MS; ; attempt++, delay = Math.min(delay * 2, MAX_DELAY_MS)) {
    try {
      return await options.migrate()
    } catch (error) {
      const reason = reasonOf(error)
      if (!isDatabaseUnavailable(error)) {
        if (!isFatalRefusal(error)) throw error
        throw new DatabaseStartupError(`the database at ${where} refused: ${reason}`, { cause: error })
      }
      const left = deadline - now()
      if (left <= 0) {
        throw new DatabaseStartupError(
          `the database at ${where} did not answer within ${options.timeoutSeconds} s (DATABASE_STARTUP_TIMEOUT_SECONDS): ${reason}; exiting`,
          { cause: error },
        )
      }
      const wait = Math.min(delay, left)
      options.log(
        `${options.name}: the database at ${where} does not answer (attempt ${attempt}): ${reason}; retrying in ${(wait / 1000).toFixed(1)} s`,
      )
      await sleep(wait)
    }
  }
}
