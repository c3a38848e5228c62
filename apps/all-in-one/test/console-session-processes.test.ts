import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ServiceProcess, startDeployment } from './processes'

const databaseUrl = process.env.TEST_DATABASE_URL

/**
 * Issue 42 item 2: a console session lives in PostgreSQL, so two management processes behind one
 * ingress share it: signed in at one, it works at the other; signed out or timed out at one, the
 * other refuses it at once.
 */
describe.runIf(databaseUrl)('console sessions across two management processes (PostgreSQL)', () => {
  const root = { id: `root-${crypto.randomUUID()}`, secret: 'console-session-processes-root-0123456789' }
  const processes: ServiceProcess[] = []
  let a: ServiceProcess
  let b: ServiceProcess
  const sql = postgres(databaseUrl as string, { max: 1 })

  beforeAll(async () => {
    processes.push(...(await startDeployment(databaseUrl as string, root, ['management', 'management'])))
    ;[a, b] = processes as [ServiceProcess, ServiceProcess]
  }, 120_000)

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()))
    await sql.end()
  })

  async function signIn(at: ServiceProcess) {
    const response = await fetch(`${at.origin}/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientId: root.id, clientSecret: root.secret }),
    })
    expect(response.status).toBe(201)
    const value = /=([^;]*)/.exec(response.headers.getSetCookie()[0] ?? '')?.[1]
    const { csrfToken } = (await response.json()) as { csrfToken: string }
    return { cookie: `__Secure-console-session=${value}`, 'x-console-csrf': csrfToken }
  }

  const tenants = (at: ServiceProcess, headers: Record<string, string>) =>
    fetch(`${at.origin}/api/tenants`, { headers }).then((response) => response.status)

  it('signed in at one process, the session works at the other; signed out at that one, both refuse it', async () => {
    const session = await signIn(a)
    expect(await tenants(b, session)).toBe(200)
    expect(await tenants(a, session)).toBe(200)
    const out = await fetch(`${b.origin}/console/session`, { method: 'DELETE', headers: session })
    expect(out.status).toBe(204)
    expect(await tenants(a, session)).toBe(401)
    expect(await tenants(b, session)).toBe(401)
  })

  it('the idle timeout is read on the database clock: an idle session ends in every process', async () => {
    const session = await signIn(a)
    expect(await tenants(b, session)).toBe(200)
    await sql`update console_sessions set last_seen_at = now() - interval '1801 seconds' where client_id = ${root.id}`
    expect(await tenants(a, session)).toBe(401)
    expect(await tenants(b, session)).toBe(401)
  })
})
