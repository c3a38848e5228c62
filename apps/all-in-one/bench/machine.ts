/**
 * How busy the machine was with work that is not the bench's. Figures taken while other processes
 * compete for the cores are noise, not measurements (issue 20): each row records the CPU the rest
 * of the machine used meanwhile, and rows above the bound are flagged.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { cpuMs } from './proc'

/** Other processes may use at most this share of the machine's CPU while a row is measured. */
export const NOISY_SHARE = 0.1

const TICK_MS = 10

/** Busy CPU milliseconds of the whole machine so far (all cores; /proc/stat's first line). */
function machineBusyMs(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1) ?? []
  // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number)
  return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * TICK_MS
}

/** PostgreSQL's processes: the database the flows use is part of the workload, not noise. */
function postgresPids(): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') pids.push(Number(entry))
    } catch {
      // Gone meanwhile.
    }
  }
  return pids
}

function workloadMs(serverPids: number[]): number {
  const own = process.cpuUsage()
  let total = (own.user + own.system) / 1000
  for (const pid of [...serverPids, ...postgresPids()]) {
    try {
      total += cpuMs(pid)
    } catch {
      // A backend that ended meanwhile: its CPU is lost to both readings alike.
    }
  }
  return total
}

export interface MachineSample {
  busyMs: number
  workloadMs: number
  at: number
}

export function sampleMachine(serverPids: number[]): MachineSample {
  return { busyMs: machineBusyMs(), workloadMs: workloadMs(serverPids), at: performance.now() }
}

/**
 * The share of the machine's CPU (0–1) that other processes used between two samples: the machine's
 * busy time less the bench's own (load client, servers, PostgreSQL), over elapsed time × cores.
 * Backends that ended between the samples count as other work, so this errs towards flagging.
 */
export function otherShare(before: MachineSample, after: MachineSample): number {
  const elapsed = after.at - before.at
  if (elapsed <= 0) return 0
  const other = after.busyMs - before.busyMs - (after.workloadMs - before.workloadMs)
  return Math.max(0, other / (elapsed * cpus().length))
}

/** `load average 0.42, 0.30, 0.25 on 2 cores`. */
export function loadLine(): string {
  return `load average ${loadavg()
    .map((value) => value.toFixed(2))
    .join(', ')} on ${cpus().length} cores`
}
