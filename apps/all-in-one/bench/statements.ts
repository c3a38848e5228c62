/**
 * Database statements the server processes sent, from each process's own `/api/metrics`
 * (`db_statements_total`): the bench divides a level's difference by its flows. A checkout
 * without the counter (an older one under BENCH_COMPARE) reads as undefined.
 */
import type { ServerProcess } from './service'

const COUNTER = /^credential_service_db_statements_total (\d+)$/m

async function post(base: string, path: string, body: unknown, token?: string) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`)
  return (await response.json()) as Record<string, string>
}

const tokenOf = async (base: string, id: string, secret: string) =>
  (
    await post(base, '/api/oauth2/token', {
      grant_type: 'client_credentials',
      client_id: id,
      client_secret: secret,
    })
  ).access_token as string

/** A token of an operator client of its own with `metrics:read`, which the root client lacks (an operator client also holds `tenant:manage`). */
export async function metricsToken(base: string, root: { id: string; secret: string }): Promise<string> {
  const client = await post(
    base,
    '/api/clients',
    { roles: ['tenant:manage', 'metrics:read'] },
    await tokenOf(base, root.id, root.secret),
  )
  return tokenOf(base, client.clientId as string, client.clientSecret as string)
}

export async function statementsSent(processes: ServerProcess[], token: string): Promise<number | undefined> {
  let total = 0
  for (const process of processes) {
    const response = await fetch(`${process.origin}/api/metrics`, {
      headers: { authorization: `Bearer ${token}` },
    })
    const count = response.ok ? COUNTER.exec(await response.text())?.[1] : undefined
    if (count === undefined) return undefined
    total += Number(count)
  }
  return total
}
