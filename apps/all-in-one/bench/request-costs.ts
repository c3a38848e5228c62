/**
 * Issue 44: what each request of the wallet's flow costs the server. One flow at a time, the
 * server processes' CPU is read around each request from /proc/<pid>/task/<tid>/schedstat
 * (nanoseconds, every thread: JavaScript, libuv's pool, the GC's helpers) rather than /proc's
 * 10 ms ticks, and averaged over the flows. Revalidating the two metadata documents with their
 * ETag (a wallet that keeps them) is measured the same way, outside the flow.
 */
import { readdirSync, readFileSync } from 'node:fs'
import type { Step } from './flows'
import type { ServerProcess } from './service'

/** CPU nanoseconds every thread of `pid` has used so far. */
function cpuNs(pid: number): number {
  let total = 0
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
    } catch {
      // The thread ended meanwhile.
    }
  }
  return total
}

export interface RequestCost {
  request: string
  /** Mean server CPU per request, all server processes together. */
  cpuMs: number
}

export async function measureRequestCosts(
  processes: ServerProcess[],
  flow: (step: Step) => Promise<void>,
  revalidated: { name: string; url: string }[],
  flows: number,
): Promise<RequestCost[]> {
  const serverNs = () => processes.reduce((sum, p) => sum + cpuNs(p.pid), 0)
  const totals = new Map<string, number>()
  // Work a server does after its answer is sent (hooks, logging) belongs to the request that caused it.
  const settle = () => new Promise((resolve) => setTimeout(resolve, 2))
  const metered: Step = async (name, request) => {
    await settle()
    const before = serverNs()
    const answer = await request()
    await settle()
    totals.set(name, (totals.get(name) ?? 0) + serverNs() - before)
    return answer
  }
  for (let i = 0; i < flows; i++) await flow(metered)
  for (const { name, url } of revalidated) {
    const etag = (await fetch(url)).headers.get('etag')
    if (!etag) throw new Error(`${url} has no ETag`)
    for (let i = 0; i < flows; i++)
      await metered(name, async () => {
        const response = await fetch(url, { headers: { 'if-none-match': etag } })
        if (response.status !== 304) throw new Error(`${url}: ${response.status}, not 304`)
      })
  }
  return [...totals].map(([request, ns]) => ({ request, cpuMs: Number((ns / flows / 1e6).toFixed(3)) }))
}
