import { readFileSync } from 'node:fs'

const TICK_MS = 10 // Linux USER_HZ: /proc reports CPU time in 1/100 s

/** User + system CPU milliseconds a process has used so far. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS
}

/** Resident set size of a process in MB. */
export function rssMb(pid: number): number {
  const line =
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:')) ?? '0'
  return Number(line.replace(/\D+/g, '')) / 1024
}
