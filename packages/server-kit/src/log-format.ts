/** Where a process writes its log lines (issue 23 item 5): JSON for collectors, readable lines for people. */
export type LogFormat = 'auto' | 'json' | 'pretty'

/** What the log goes to: stdout, or a stand-in stream in tests. */
export type LogOutput = NodeJS.WritableStream & { isTTY?: boolean }

/**
 * The log stream for `LOG_FORMAT`: undefined keeps pino's JSON lines on stdout; `pretty` (or
 * `auto` on a terminal) formats each line with pino-pretty, in this thread, coloured on a
 * terminal. Loaded only then: a container's process never loads it.
 */
export async function logStreamFor(
  format: LogFormat,
  out: LogOutput = process.stdout,
): Promise<{ write(line: string): void } | undefined> {
  if (format === 'json' || (format === 'auto' && !out.isTTY)) return undefined
  const { default: pretty } = await import('pino-pretty')
  return pretty({
    destination: out,
    colorize: Boolean(out.isTTY),
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
  })
}
