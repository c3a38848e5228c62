import type { Flow } from './flows'

/**
 * Warm-up flows of each kind (BENCH_WARMUP). Issue 44 item 5: after 50 sequential ones the first
 * measured row read 15–35 % above the same level measured again; after 300 it did not.
 */
export const WARMUP_FLOWS = Number(process.env.BENCH_WARMUP ?? 300)

/** Runs `count` flows of each kind, eight in flight (JIT compilation needs the calls, not the wait). */
export async function warmUp(flows: Flow[], count: number): Promise<void> {
  for (const flow of flows) {
    let next = 0
    await Promise.all(
      Array.from({ length: Math.min(8, count) }, async () => {
        while (next++ < count) await flow()
      }),
    )
  }
}
