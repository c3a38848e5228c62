/**
 * `BENCH_COMPARE=<checkout>`: an A/B of this checkout against another built one, interleaved so
 * that both see the same machine. On a shared VM the CPU per flow of two runs minutes apart
 * differs by up to ±30 % for the same code, far more than the changes worth measuring; here the
 * two all-in-one processes run side by side on their own databases and every level alternates
 * short batches between them (A B A B …), each side's CPU summed over its batches.
 *
 * Both tenants are set up by this checkout's bench the same way, without the authorization code
 * configuration (older checkouts do not have it; BENCH_COMPARE_CODE_FLOW adds it), so they serve
 * the same metadata.
 *
 * `BENCH_COMPARE=pods` (issue 44): this checkout against itself, A with BENCH_PODS issuer and
 * verifier processes behind the round-robin ingress (2 by default), B with one of each (as
 * `--separate`); each side's CPU is all its server processes'. BENCH_COMPARE_POOL_SIZE: B's
 * DATABASE_POOL_SIZE (A keeps the bench's), to compare pool sizes.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createFlows, type Flow, setUpTenant } from './flows'
import { loadLine, NOISY_SHARE, otherShare, sampleMachine } from './machine'
import { cpuMs } from './proc'
import { type RunningService, startAllInOne, startSeparate } from './service'
import { metricsToken, statementsSent } from './statements'
import { createWalletFlow } from './wallet-flow'
import { WARMUP_FLOWS, warmUp } from './warm-up'

const LEVELS = [1, 8, 32]
const FLOWS_PER_LEVEL = Number(process.env.BENCH_FLOWS ?? 200)
/** Batches per side and level: more batches interleave more finely. */
const ROUNDS = Number(process.env.BENCH_COMPARE_ROUNDS ?? 8)
/**
 * BENCH_COMPARE_CODE_FLOW=1: the authorization code and Interactive Authorization flows too, for a
 * checkout that has them (2026-12 and later); older ones cannot set up their configurations.
 */
const codeFlow = Boolean(process.env.BENCH_COMPARE_CODE_FLOW)

interface Side {
  name: string
  service: RunningService
  flows: Record<string, Flow>
  metricsToken: string
}

async function runBatch(flow: Flow, concurrency: number, count: number): Promise<number> {
  let next = 0
  let errors = 0
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        next++
        await flow().catch((error: Error) => {
          errors++
          if (errors === 1) console.error(error.message)
        })
      }
    }),
  )
  return errors
}

export async function compareCheckouts(other: string, only: string[] | undefined): Promise<void> {
  const pods = other === 'pods' ? Number(process.env.BENCH_PODS ?? 2) : undefined
  // Issue 44 item 4: B with another pool than A (DATABASE_POOL_SIZE), e.g. this checkout against itself.
  const poolB: Record<string, string> = process.env.BENCH_COMPARE_POOL_SIZE
    ? { DATABASE_POOL_SIZE: process.env.BENCH_COMPARE_POOL_SIZE }
    : {}
  const start = (url: string, checkout: string | undefined, side: number) =>
    pods === undefined
      ? startAllInOne(url, checkout, side === 1 ? poolB : {})
      : startSeparate(url, side === 0 ? pods : 1)
  const urlA = process.env.BENCH_DATABASE_URL
  const urlB = process.env.BENCH_COMPARE_DATABASE_URL
  if (!urlA || !urlB)
    throw new Error('BENCH_COMPARE needs BENCH_DATABASE_URL and BENCH_COMPARE_DATABASE_URL (two databases)')
  const sides: Side[] = []
  const loadAtStart = loadLine()
  console.log(`bench: ${loadAtStart}`)
  try {
    const sideNames = pods === undefined ? ['this checkout', other] : [`${pods} pods`, '1 pod (--separate)']
    for (const [index, url, checkout] of [
      [0, urlA, undefined],
      [1, urlB, pods === undefined ? other : undefined],
    ] as const) {
      const name = sideNames[index] as string
      const service = await start(url, checkout, index)
      const { tenant, auth, client } = await setUpTenant(service.base, service.rootClient, { codeFlow })
      const wallet = await createWalletFlow(service.base, client)
      const all = await createFlows(service.base, tenant, auth, { codeFlow, wallet })
      const flows = Object.fromEntries(
        Object.entries(all).filter(
          ([flow]) => !only || only.some((part) => flow.toLowerCase().includes(part)),
        ),
      )
      sides.push({
        name,
        service,
        flows,
        metricsToken: await metricsToken(service.base, service.rootClient),
      })
    }
    // Round robin splits the warm-up between the pods: each pod gets as many flows as one process.
    for (const [index, side] of sides.entries()) {
      const warmup = WARMUP_FLOWS * (index === 0 && pods !== undefined ? pods : 1)
      await warmUp(Object.values(side.flows), warmup)
    }

    const pids = sides.flatMap((side) => side.service.processes.map((p) => p.pid))
    const rows: {
      flow: string
      concurrency: number
      a: number
      b: number
      errors: number
      otherCpuShare: number
      statementsA?: number
      statementsB?: number
    }[] = []
    const statements = () =>
      Promise.all(sides.map((side) => statementsSent(side.service.processes, side.metricsToken)))
    const batch = Math.max(1, Math.round(FLOWS_PER_LEVEL / ROUNDS))
    for (const flow of Object.keys(sides[0]?.flows ?? {})) {
      for (const concurrency of LEVELS) {
        const cpu = [0, 0]
        let errors = 0
        const statementsBefore = await statements()
        const machineBefore = sampleMachine(pids)
        for (let round = 0; round < ROUNDS; round++) {
          // Alternate which side goes first, so neither always follows the other's tail.
          const order = round % 2 === 0 ? [0, 1] : [1, 0]
          for (const index of order) {
            const side = sides[index] as Side
            const sideCpu = () => side.service.processes.reduce((sum, p) => sum + cpuMs(p.pid), 0)
            const before = sideCpu()
            errors += await runBatch(side.flows[flow] as Flow, concurrency, batch)
            cpu[index] = (cpu[index] ?? 0) + sideCpu() - before
          }
        }
        const perFlow = (ms = 0) => Number((ms / (batch * ROUNDS)).toFixed(2))
        const others = Number(otherShare(machineBefore, sampleMachine(pids)).toFixed(3))
        const statementsAfter = await statements()
        const sent = (index: number) => {
          const before = statementsBefore[index]
          const after = statementsAfter[index]
          if (before === undefined || after === undefined) return {}
          return { [index === 0 ? 'statementsA' : 'statementsB']: perFlow(after - before) }
        }
        const row = {
          flow,
          concurrency,
          a: perFlow(cpu[0]),
          b: perFlow(cpu[1]),
          errors,
          otherCpuShare: others,
          ...sent(0),
          ...sent(1),
        }
        rows.push(row)
        console.log(JSON.stringify(row))
      }
    }
    const table = [
      `A: ${sideNames[0]}; B: ${sideNames[1]}. ${pods === undefined ? 'All-in-one' : 'Separate processes'} on PostgreSQL, ${batch * ROUNDS} flows per level in ${ROUNDS} alternating batches per side; ${loadAtStart} at the start, ${loadLine().replace('load average ', '')} at the end.`,
      '',
      '| flow | concurrency | A: server CPU ms/flow | B: server CPU ms/flow | A vs B | A / B SQL statements/flow | other CPU |',
      '|---|---|---|---|---|---|---|',
      ...rows.map(
        (r) =>
          `| ${r.flow} | ${r.concurrency} | ${r.a} | ${r.b} | ${r.b > 0 ? `${(100 * (r.a / r.b - 1)).toFixed(0)} %` : '–'} | ${r.statementsA ?? '–'} / ${r.statementsB ?? '–'} | ${Math.round(100 * r.otherCpuShare)} %${r.otherCpuShare > NOISY_SHARE ? ' NOISY' : ''} |`,
      ),
    ].join('\n')
    const out = process.env.BENCH_OUT ?? new URL('../../../bench-results', import.meta.url).pathname
    mkdirSync(out, { recursive: true })
    writeFileSync(join(out, 'compare.json'), `${JSON.stringify({ other, rounds: ROUNDS, rows }, null, 2)}\n`)
    writeFileSync(join(out, 'compare.md'), `${table}\n`)
    console.log(`\n${table}`)
    if (rows.some((r) => r.errors > 0)) process.exitCode = 1
  } finally {
    await Promise.all(sides.map((side) => side.service.stop()))
  }
}
