import { databaseRefusal, isDatabaseUnavailable } from '@credential-service/db-schema'

export interface OutageLogger {
  debug(object: Record<string, unknown>, message: string): void
  info(object: Record<string, unknown>, message: string): void
  warn(object: Record<string, unknown>, message: string): void
  error(object: Record<string, unknown>, message: string): void
}

/**
 * The failures of a background job (the webhook outbox, a scheduled job), which retries on its
 * own. A database outage is not a fault of the service: its first failure is one warn line (as a
 * request's 503 is, docs/operations.md), the ones after it are debug, and the first run that
 * succeeds says at info that the database answers again. Any other failure is logged at error,
 * each time.
 */
export function createOutageLog(job: string) {
  let down = false
  return {
    failed(
      log: OutageLogger | undefined,
      error: unknown,
      message: string,
      fields: Record<string, unknown> = {},
    ) {
      if (!isDatabaseUnavailable(error)) return log?.error({ ...fields, err: error }, message)
      if (down) return log?.debug({ ...fields, err: error }, message)
      down = true
      const reason = databaseRefusal(error) ?? 'the database is unavailable'
      log?.warn(
        { ...fields, code: 'database_unavailable', err: error },
        `${job}: ${reason}; retrying until it answers`,
      )
    },
    succeeded(log: OutageLogger | undefined) {
      if (!down) return
      down = false
      log?.info({ code: 'database_available' }, `${job}: the database answers again`)
    },
  }
}
