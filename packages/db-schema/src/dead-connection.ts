// The connection errors of postgres.js, and the errors PostgreSQL ends a backend with.
const DEAD_CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
  'ECONNRESET',
  'EPIPE',
  '57P01', // admin_shutdown: pg_terminate_backend, a fast shutdown
  '57P02', // crash_shutdown
])

// A frame in the driver's own files (ESM or CommonJS build), under node_modules or pnpm's store.
const DRIVER_FRAME = /[/\\]postgres[/\\](?:cjs[/\\])?src[/\\]\w+\.js/

/**
 * Whether `error` is postgres.js failing on a connection whose socket is gone, with no caller left
 * to answer: a deferred write on a null socket (porsager/postgres#1208, which
 * patches/postgres@3.4.9.patch guards) or a rejected connection error nobody awaited.
 */
export function isDeadConnectionError(error: unknown): boolean {
  if (!(error instanceof Error) || !DRIVER_FRAME.test(error.stack ?? '')) return false
  if (error instanceof TypeError) return /of null|null is not an object/.test(error.message)
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && DEAD_CONNECTION_CODES.has(code)
}
