/**
 * `pnpm bench` (issue 7): starts the service — the all-in-one process, or with `--separate` the
 * three apps as separate processes on PostgreSQL — drives complete issuance (SD-JWT VC, mdoc) and
 * presentation flows over real HTTP at concurrency 1, 8 and 32, and reports flows/s, latency
 * percentiles, server CPU per flow (the server processes' own CPU time), idle and peak RSS per
 * process, and errors. In the same run it measures the ceiling of each flow (ceiling.ts) and prints
 * server CPU per flow as a multiple of it. Writes bench-results/bench[-separate].json and .md.
 *
 *   BENCH_DATABASE_URL  PostgreSQL to run on (required with --separate); embedded PGlite otherwise
 *   BENCH_FLOWS         flows per concurrency level (default 200)
 *   BENCH_PROFILE       folder for V8 CPU profiles of the server processes
 *   BENCH_WARMUP        warm-up flows of each kind, eight in flight (default 300)
 *   BENCH_CEILING_ITERATIONS  flows per round of each ceiling (default: BENCH_FLOWS within 100–200)
 *   BENCH_OUT           output folder (default bench-results)
 *   BENCH_KEY_PROVIDER  pkcs11: the key chain on a SoftHSM2 token (db: in the database, the default)
 *   BENCH_PODS          2: like --separate with two issuer and two verifier processes behind a
 *                       round-robin ingress (bench-results/bench-pods-2.*)
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { type CeilingResult, openCeilings } from './ceiling'
import { compareCheckouts } from './compare'
import { CODE_FLOW, createFlows, type Flow, INTERACTIVE_FLOW, setUpTenant, WALLET_FLOW } from './flows'
import { measureHttpFloor } from './http-floor'
import { KEY_PROVIDER, prepareKeyProvider } from './key-provider'
import { loadLine, NOISY_SHARE, otherShare, sampleMachine } from './machine'
import { cpuMs, rssMb } from './proc'
import { measureRequestCosts, type RequestCost } from './request-costs'
import { measureRssFloor } from './rss-floor'
import { appNodeArgs, type ServerProcess, startAllInOne, startSeparate } from './service'
import { metricsToken, statementsByProcess } from './statements'
import { requestsSentByFlows } from './wallet-address'
import { createWalletFlow } from './wallet-flow'
import { WARMUP_FLOWS, warmUp } from './warm-up'

const root = new URL('../../..', import.meta.url).pathname
const FLOWS_PER_LEVEL = Number(process.env.BENCH_FLOWS ?? 200)
// At least 100 iterations a round by default: fewer would leave the ratio to noise. The bench's own
// test sets a few: it checks the columns, not the figures.
const CEILING_ITERATIONS = Number(
  process.env.BENCH_CEILING_ITERATIONS ?? Math.max(100, Math.min(FLOWS_PER_LEVEL, 200)),
)
/** Concurrency levels (BENCH_LEVELS, e.g. `1` to profile one flow in flight). */
const LEVELS = (process.env.BENCH_LEVELS ?? '1,8,32').split(',').map(Number)
/** BENCH_PODS=2: two issuer and two verifier processes (separate mode) behind a round-robin ingress. */
const PODS = Number(process.env.BENCH_PODS ?? 1)
const separate = process.argv.includes('--separate') || PODS > 1
/** Comma-separated parts of flow names: only those flows run (all when unset). */
const only = process.env.BENCH_ONLY?.split(',').map((part) => part.trim().toLowerCase())
const databaseUrl = process.env.BENCH_DATABASE_URL

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)
const round = (value: number, digits = 1) => Number(value.toFixed(digits))
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0

interface Row {
  flow: string
  concurrency: number
  flows: number
  flowsPerSecond: number
  p50Ms: number
  p95Ms: number
  p99Ms: number
  serverCpuMsPerFlow: number
  /** The same, per server process (one entry in all-in-one mode). */
  cpuMsPerFlowByProcess: Record<string, number>
  /** The same, per app: the processes of an app (`issuer`, `issuer-2`) together. */
  cpuMsPerFlowByApp: Record<string, number>
  /** The flow's ceiling, measured right after its rows (ceiling.ts). */
  ceilingMs?: number
  ceilingRatio?: number
  /** Server CPU per flow as a multiple of the ceiling plus one bare HTTP request per request sent (http-floor.ts). */
  protocolCeilingRatio?: number
  /** HTTP requests per flow, all sent by the flow's wallet and integrator. */
  requestsPerFlow: number
  peakRssMb: Record<string, number>
  errors: number
  /** Database statements per flow, all server processes together (statements.ts). */
  statementsPerFlow?: number
  /** Statements each process sent during the level: with BENCH_PODS, shows every pod took its turn. */
  statementsByProcess?: Record<string, number>
  /** Share of the machine's CPU other processes used meanwhile (machine.ts). */
  otherCpuShare: number
  /** Taken while other processes used more than NOISY_SHARE of the CPU: noise, not a measurement. */
  noisy: boolean
}

async function runLevel(
  name: string,
  flow: Flow,
  concurrency: number,
  processes: ServerProcess[],
  metricsReader: string,
): Promise<Row> {
  const statementsBefore = await statementsByProcess(processes, metricsReader)
  const requestsBefore = requestsSentByFlows()
  const latencies: number[] = []
  let errors = 0
  let next = 0
  const peak = Object.fromEntries(processes.map((p) => [p.name, rssMb(p.pid)]))
  const sampler = setInterval(() => {
    for (const p of processes) peak[p.name] = Math.max(peak[p.name] ?? 0, rssMb(p.pid))
  }, 100)
  const cpuBefore = processes.map((p) => cpuMs(p.pid))
  const machineBefore = sampleMachine(processes.map((p) => p.pid))
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < FLOWS_PER_LEVEL) {
        next++
        const t0 = performance.now()
        try {
          await flow()
          latencies.push(performance.now() - t0)
        } catch (error) {
          errors++
          if (errors === 1) console.error(`${name}: ${(error as Error).message}`)
        }
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  clearInterval(sampler)
  const others = otherShare(machineBefore, sampleMachine(processes.map((p) => p.pid)))
  const statementsAfter = await statementsByProcess(processes, metricsReader)
  const requests = requestsSentByFlows() - requestsBefore
  const cpuUsed = processes.map((p, i) => cpuMs(p.pid) - (cpuBefore[i] ?? 0))
  const cpu = cpuUsed.reduce((sum, ms) => sum + ms, 0)
  const perFlow = (ms: number) => round(ms / Math.max(1, latencies.length), 2)
  latencies.sort((a, b) => a - b)
  return {
    flow: name,
    concurrency,
    flows: latencies.length,
    flowsPerSecond: round(latencies.length / seconds),
    p50Ms: round(percentile(latencies, 50)),
    p95Ms: round(percentile(latencies, 95)),
    p99Ms: round(percentile(latencies, 99)),
    serverCpuMsPerFlow: perFlow(cpu),
    cpuMsPerFlowByProcess: Object.fromEntries(processes.map((p, i) => [p.name, perFlow(cpuUsed[i] ?? 0)])),
    cpuMsPerFlowByApp: perApp(processes, cpuUsed, perFlow),
    peakRssMb: Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, round(v, 0)])),
    errors,
    requestsPerFlow: round(requests / Math.max(1, latencies.length + errors)),
    ...(statementsBefore !== undefined && statementsAfter !== undefined
      ? {
          statementsPerFlow: round(
            (sum(statementsAfter) - sum(statementsBefore)) / Math.max(1, latencies.length),
          ),
          statementsByProcess: Object.fromEntries(
            processes.map((p, i) => [p.name, (statementsAfter[i] ?? 0) - (statementsBefore[i] ?? 0)]),
          ),
        }
      : {}),
    otherCpuShare: round(others, 3),
    noisy: others > NOISY_SHARE,
  }
}

function perApp(processes: ServerProcess[], cpuUsed: number[], perFlow: (ms: number) => number) {
  const byApp: Record<string, number> = {}
  for (const [i, p] of processes.entries()) {
    const app = p.name.replace(/-\d+$/, '')
    byApp[app] = (byApp[app] ?? 0) + (cpuUsed[i] ?? 0)
  }
  return Object.fromEntries(Object.entries(byApp).map(([app, ms]) => [app, perFlow(ms)]))
}

function markdown(report: {
  setting: string
  load: string
  idleRssMb: Record<string, number>
  idleRssFloorMb: number
  ceilings: { flow: string; cpuMsPerFlow: number; sqlStatements: number }[]
  httpFloorMs: Record<string, number>
  results: Row[]
  requestCosts: RequestCost[]
}): string {
  const rss = (values: Record<string, number>) =>
    Object.entries(values)
      .map(([name, mb]) => (Object.keys(values).length > 1 ? `${name} ${mb}` : `${mb}`))
      .join(', ')
  const noisy = report.results.filter((r) => r.noisy).length
  return [
    `${report.setting}; idle RSS MB: ${rss(report.idleRssMb)} (the apps' dependencies alone, apps/all-in-one/bench/rss-floor.ts: ${report.idleRssFloorMb}); ${report.load}.`,
    '',
    '| flow | concurrency | flows/s | p50 ms | p95 ms | p99 ms | server CPU ms/flow | × ceiling | × ceiling with HTTP | HTTP requests/flow | SQL statements/flow | peak RSS MB | errors | other CPU |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...report.results.map(
      (r) =>
        `| ${r.flow} | ${r.concurrency} | ${r.flowsPerSecond} | ${r.p50Ms} | ${r.p95Ms} | ${r.p99Ms} | ${r.serverCpuMsPerFlow} | ${r.ceilingRatio ?? '–'} | ${r.protocolCeilingRatio ?? '–'} | ${r.requestsPerFlow} | ${r.statementsPerFlow ?? '–'} | ${rss(r.peakRssMb)} | ${r.errors} | ${Math.round(100 * r.otherCpuShare)} %${r.noisy ? ' NOISY' : ''} |`,
    ),
    '',
    ...(noisy > 0
      ? [
          `**${noisy} of ${report.results.length} rows are NOISY**: other processes used more than ${100 * NOISY_SHARE} % of the machine's CPU while they ran. They are not measurements; rerun on a quiet machine, or judge a change with BENCH_COMPARE.`,
          '',
        ]
      : []),
    `Ceiling (unavoidable crypto and SQL in one process, see apps/all-in-one/bench/ceiling.ts): ${report.ceilings
      .map((c) => `${c.flow} ${round(c.cpuMsPerFlow, 2)} ms (${c.sqlStatements} SQL statements)`)
      .join('; ')}. Target (issue 20): ≤ 1.5× the ceiling at one flow in flight, ≤ 1.2× at 32.`,
    '',
    `Ceiling with HTTP: the ceiling plus, per request the flow sends, the server CPU of one bare \`node:http\` request at the same concurrency (apps/all-in-one/bench/http-floor.ts): ${Object.entries(
      report.httpFloorMs,
    )
      .map(([level, ms]) => `${ms} ms at ${level} in flight`)
      .join(', ')}.`,
    ...(report.requestCosts.length
      ? [
          '',
          `Server CPU per request of "${WALLET_FLOW}", one flow at a time (apps/all-in-one/bench/request-costs.ts):`,
          '',
          '| request | server CPU ms |',
          '|---|---|',
          ...report.requestCosts.map((c) => `| ${c.request} | ${c.cpuMs} |`),
        ]
      : []),
  ].join('\n')
}

async function main() {
  if (process.env.BENCH_COMPARE) return compareCheckouts(process.env.BENCH_COMPARE, only)
  if (separate && !databaseUrl)
    throw new Error('--separate and BENCH_PODS run the apps on PostgreSQL: set BENCH_DATABASE_URL')
  const loadAtStart = loadLine()
  console.log(`bench: ${loadAtStart}`)
  await prepareKeyProvider()
  const service = separate
    ? await startSeparate(databaseUrl as string, PODS)
    : await startAllInOne(databaseUrl)
  try {
    const wanted = (name: string) => !only || only.some((part) => name.toLowerCase().includes(part))
    // The authorization code and Interactive Authorization flows need set-up of their own, and
    // the wallet's flow a client: made only when one of them runs.
    const codeFlow = [CODE_FLOW, INTERACTIVE_FLOW].some(wanted)
    const { tenant, auth, client } = await setUpTenant(service.base, service.rootClient, { codeFlow })
    const metricsReader = await metricsToken(service.base, service.rootClient)
    const wallet = wanted(WALLET_FLOW) ? await createWalletFlow(service.base, client) : undefined
    const flows = Object.fromEntries(
      Object.entries(await createFlows(service.base, tenant, auth, { codeFlow, wallet })).filter(([name]) =>
        wanted(name),
      ),
    )
    // Idle: started, set up, one flow of each kind done, nothing in flight.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const idleRssMb = Object.fromEntries(service.processes.map((p) => [p.name, round(rssMb(p.pid), 0)]))
    const idleRssFloorMb = round(await measureRssFloor(appNodeArgs(), databaseUrl), 0)
    const results: Row[] = []
    // Warm-up: every flow several times, so the first measured level does not pay for JIT compilation.
    // Round robin splits it between the pods: each pod gets as many as one process would.
    await warmUp(Object.values(flows), WARMUP_FLOWS * PODS)
    const ceilingsAt = await openCeilings(databaseUrl, CEILING_ITERATIONS, { warmup: WARMUP_FLOWS })
    const ceilings: CeilingResult[] = []
    try {
      for (const [name, flow] of Object.entries(flows)) {
        // Again right before its rows: the other flows' warm-up ran since, on code this one shares.
        await warmUp([flow], Math.ceil(WARMUP_FLOWS / 6))
        // A round of the flow's ceiling right before and right after each row, on the machine as
        // the row had it (the wallet's row does the SD-JWT VC issuance's work: the same ceiling).
        const ceilingFlow = name === WALLET_FLOW ? 'issuance (SD-JWT VC)' : name
        const measured: CeilingResult[] = []
        for (const concurrency of LEVELS) {
          const before = await ceilingsAt.round(ceilingFlow)
          const row = await runLevel(name, flow, concurrency, service.processes, metricsReader)
          const after = await ceilingsAt.round(ceilingFlow)
          if (before && after) {
            measured.push(before, after)
            row.ceilingMs = round((before.cpuMsPerFlow + after.cpuMsPerFlow) / 2, 3)
          }
          results.push(row)
          console.log(JSON.stringify(row))
        }
        const [first] = measured
        if (first && !ceilings.some((c) => c.flow === first.flow))
          ceilings.push({
            ...first,
            cpuMsPerFlow: sum(measured.map((m) => m.cpuMsPerFlow)) / measured.length,
          })
      }
    } finally {
      await ceilingsAt.close()
    }
    const requestCosts =
      wallet && flows[WALLET_FLOW]
        ? await measureRequestCosts(
            service.processes,
            wallet,
            [
              {
                name: 'issuer metadata revalidated (304)',
                url: `${service.base}/.well-known/openid-credential-issuer/issuers/${tenant}`,
              },
              {
                name: 'authorization server metadata revalidated (304)',
                url: `${service.base}/.well-known/oauth-authorization-server/issuers/${tenant}`,
              },
            ],
            FLOWS_PER_LEVEL,
          )
        : []
    // At least 200 bare requests a round: /proc counts CPU in 10 ms ticks.
    const httpFloor = await measureHttpFloor(LEVELS, Math.max(200, Math.min(5 * FLOWS_PER_LEVEL, 1000)))
    for (const row of results) {
      if (row.ceilingMs === undefined) continue
      row.ceilingRatio = round(row.serverCpuMsPerFlow / row.ceilingMs, 2)
      const withHttp = row.ceilingMs + row.requestsPerFlow * (httpFloor.get(row.concurrency) ?? 0)
      row.protocolCeilingRatio = round(row.serverCpuMsPerFlow / withHttp, 2)
    }
    const httpFloorMs = Object.fromEntries([...httpFloor].map(([level, ms]) => [level, round(ms, 3)]))
    const database = databaseUrl ? 'PostgreSQL' : 'embedded PGlite'
    const mode =
      PODS > 1
        ? `management, ${PODS} issuer and ${PODS} verifier processes behind a round-robin ingress`
        : separate
          ? 'management, issuer and verifier as separate processes'
          : 'all-in-one process'
    const keys = KEY_PROVIDER === 'db' ? '' : `, key chain on ${KEY_PROVIDER} (SoftHSM2)`
    const setting = `${mode}, ${database}${keys}, ${FLOWS_PER_LEVEL} flows per level, ${cpus().length} cores (${cpus()[0]?.model.trim()})`
    const load = `${loadAtStart} at the start, ${loadLine().replace('load average ', '')} at the end`
    const report = { setting, load, idleRssMb, idleRssFloorMb, ceilings, httpFloorMs, results, requestCosts }
    const out = process.env.BENCH_OUT ?? join(root, 'bench-results')
    mkdirSync(out, { recursive: true })
    const file = PODS > 1 ? `bench-pods-${PODS}` : separate ? 'bench-separate' : 'bench'
    writeFileSync(join(out, `${file}.json`), `${JSON.stringify(report, null, 2)}\n`)
    const table = markdown(report)
    writeFileSync(join(out, `${file}.md`), `${table}\n`)
    console.log(`\n${table}`)
    if (results.some((r) => r.errors > 0)) process.exitCode = 1
    if (results.some((r) => r.noisy))
      console.warn(`bench: rows marked NOISY were measured on a busy machine; do not publish them`)
  } finally {
    await service.stop()
  }
}

await main()
