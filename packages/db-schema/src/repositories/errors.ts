type DriverError = { code?: string; constraint_name?: string; constraint?: string; cause?: unknown }

/** The constraint named by a Postgres error of `code` anywhere in the cause chain, from either driver. */
function violation(error: unknown, code: string): string | undefined {
  for (let current = error as DriverError | undefined; current; current = current.cause as DriverError) {
    if (current.code === code) return current.constraint_name ?? current.constraint ?? ''
  }
  return undefined
}

/** The constraint of a foreign key violation (23503), from either driver; undefined for other errors. */
export const foreignKeyViolation = (error: unknown) => violation(error, '23503')

/** The constraint of a unique or primary key violation (23505), from either driver; undefined otherwise. */
export const uniqueViolation = (error: unknown) => violation(error, '23505')

/** The constraint of a CHECK violation (23514), from either driver; undefined for other errors. */
export const checkViolation = (error: unknown) => violation(error, '23514')
