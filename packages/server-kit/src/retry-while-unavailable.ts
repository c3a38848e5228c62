import { isDatabaseUnavailable } from '@credential-service/db-schema'

// About 6 s in all: a pool has new connections within ~2 s after every backend was terminated.
const DELAYS_MS = [100, 250, 500, 1000, 2000, 2000]

/**
 * Runs `statement` again while it fails because the database is unavailable (a reset connection,
 * a restart), for about 6 s, unless `stop()` says to give up (the process is closing). Any other
 * error, or the last one, is thrown. Only for statements that are safe to repeat.
 */
export async function retryWhileUnavailable<T>(
  statement: () => Promise<T>,
  stop: () => boolean = () => false,
): Promise<T> {
  for (const delay of DELAYS_MS) {
    try {
      return await statement()
    } catch (error) {
      if (!isDatabaseUnavailable(error) || stop()) throw error
    }
    await new Promise((resolve) => setTimeout(resolve, delay))
  }
  return statement()
}
