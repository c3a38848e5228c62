import { createServer } from 'node:net'

/**
 * A port nobody listens on now, chosen by the kernel, so PUBLIC_URL can name the address the
 * service will listen on. A random pick in 40000–60000 collided with other suites' listeners and
 * with the kernel's own outgoing (ephemeral) ports on a loaded CI machine (EADDRINUSE).
 */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}
