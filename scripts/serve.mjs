import { spawn } from 'node:child_process'

/**
 * Runs a Node process (the service) as a child and stops it as Ctrl-C does: SIGINT or SIGTERM
 * reaches the child, which closes gracefully, and this process exits with the child's status. (A
 * blocking spawnSync would leave the server running when only this process gets SIGTERM.)
 */
export function serve(args, cwd) {
  const child = spawn(process.execPath, args, { cwd, stdio: 'inherit' })
  const stop = (signal) => child.kill(signal)
  for (const signal of ['SIGINT', 'SIGTERM']) {
    // Ctrl-C signals the whole process group, the child included: forwarding again is harmless.
    process.on(signal, () => stop(signal))
  }
  // `npm start` runs this under `sh -c`: a SIGTERM to npm ends npm and the shell but never reaches
  // this process. It is then re-parented, and stops the server as on SIGTERM instead of leaving it
  // holding the port (issue 23 item 5).
  const parent = process.ppid
  setInterval(() => process.ppid !== parent && stop('SIGTERM'), 250).unref()
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
}
