import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { loadLine, otherShare, sampleMachine } from '../bench/machine'
import { cpuMs } from '../bench/proc'

describe('bench: the machine behind the figures (issue 20, bench honesty)', () => {
  it("counts a busy process outside the bench's workload as other CPU, and not once it is a server", async () => {
    const child = spawn(process.execPath, ['-e', 'for (;;);'])
    try {
      const pid = child.pid as number
      const before = { stranger: sampleMachine([]), server: sampleMachine([pid]) }
      // Until the child has had a few scheduler ticks, whatever the machine's load.
      for (let waited = 0; waited < 100 && cpuMs(pid) < 200; waited++)
        await new Promise((resolve) => setTimeout(resolve, 50))
      const after = { stranger: sampleMachine([]), server: sampleMachine([pid]) }
      const stranger = otherShare(before.stranger, after.stranger)
      const server = otherShare(before.server, after.server)
      expect(cpuMs(pid)).toBeGreaterThanOrEqual(200)
      expect(stranger).toBeGreaterThan(server)
      expect(stranger - server).toBeGreaterThan(0.01)
    } finally {
      child.kill('SIGKILL')
    }
  })

  it('names the load average and the core count', () => {
    expect(loadLine()).toMatch(/^load average \d+\.\d\d, \d+\.\d\d, \d+\.\d\d on \d+ cores$/)
  })
})
