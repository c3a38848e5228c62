/**
 * Database statements the server processes sent, from each process's own `/api/metrics`
 * (`db_statements_total`): the bench divides a level's difference by its flows. A checkout
 * without the counter (an older one under BENCH_COMPARE) reads as undefined.
 */
import { call, clientToken } from './flows'
import type { ServerProcess } from './service'

const COUNTER = /^credential_service_db_statements_total (\d+)$/m

/** A token of an operator client of its own with `metrics:read`, which the root client lacks (an operator client also holds `tenant:manage`). */
export async function metricsToken(base: string, root: { id: string; secret: string }): Promise<string> {
  const operator = `Bearer ${await clientToken(base, root.id, root.secret)}`
  const client = await call(base, '/api/clients', {
    body: { roles: ['tenant:manage', 'metrics:read'] },
    headers: { authorization: operator },
  })
  return clientToken(base, client.clientId, client.clientSecret)
}

/** Each process's count, in the order of `processes`. */
export async function statementsByProcess(
  processes: ServerProcess[],
  token: string,
): Promise<number[] | undefined> {
  const counts: number[] = []
  for (const process of processes) {
    const response = await fetch(`${process.origin}/api/metrics`, {
      headers: { authorization: `Bearer ${token}` },
    })
    const count = response.ok ? COUNTER.exec(await response.text())?.[1] : undefined
    if (count === undefined) return undefined
    counts.push(Number(count))
  }
  return counts
}

export async function statementsSent(processes: ServerProcess[], token: string): Promise<number | undefined> {
  return (await statementsByProcess(processes, token))?.reduce((sum, count) => sum + count, 0)
}
