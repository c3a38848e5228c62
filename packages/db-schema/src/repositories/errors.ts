/** The constraint of a foreign key violation (23503), from either driver; undefined for other errors. */
export function foreignKeyViolation(error: unknown): string | undefined {
  for (
    let current = error as
      | { code?: string; constraint_name?: string; constraint?: string; cause?: unknown }
      | undefined;
    current;
    current = current.cause as typeof current
  ) {
    if (current.code === '23503') return current.constraint_name ?? current.constraint ?? ''
  }
  return undefined
}
