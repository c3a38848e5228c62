import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'

const serveModule = new URL('./serve.mjs', import.meta.url).pathname

/** Whether a process is alive (signal 0 checks without sending). */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function until(condition: () => boolean, ms = 5000) {
  for (const start = Date.now(); !condition(); await sleep(50))
    if (Date.now() - start > ms) throw new Error('timed out')
}

describe('issue 23 item 5: npm start stops the server when npm is stopped', () => {
  it('a SIGTERM that ends the shell npm runs the script in (never reaching the script) stops the server gracefully', async () => {
    const work = mkdtempSync(join(tmpdir(), 'cs-serve-'))
    let serverPid = 0
    try {
      const server = join(work, 'server.cjs')
      const marks = join(work, 'marks')
      // The stand-in server: records its pid, and how it was stopped.
      writeFileSync(
        server,
        `const fs = require('node:fs')
fs.writeFileSync(${JSON.stringify(marks)}, 'started ' + process.pid)
process.on('SIGTERM', () => { fs.writeFileSync(${JSON.stringify(marks)}, 'SIGTERM'); process.exit(0) })
setInterval(() => {}, 1000)`,
      )
      const script = join(work, 'start.mjs')
      writeFileSync(
        script,
        `import { serve } from ${JSON.stringify(serveModule)}\nserve([${JSON.stringify(server)}])\n`,
      )
      // As npm runs a script: `sh -c '<script>'` (the `; :` keeps sh from exec-ing it, as npm's
      // shell does not either).
      const shell = spawn('sh', ['-c', `${JSON.stringify(process.execPath)} ${JSON.stringify(script)}; :`], {
        stdio: 'ignore',
      })
      await until(() => existsSync(marks) && readFileSync(marks, 'utf8').startsWith('started'))
      serverPid = Number(readFileSync(marks, 'utf8').split(' ')[1])
      shell.kill('SIGTERM')
      await until(() => readFileSync(marks, 'utf8') === 'SIGTERM')
      await until(() => !alive(serverPid))
      expect(readFileSync(marks, 'utf8')).toBe('SIGTERM')
    } finally {
      // When the test fails, the stand-in server must not outlive it.
      if (serverPid && alive(serverPid)) process.kill(serverPid, 'SIGKILL')
      rmSync(work, { recursive: true, force: true })
    }
  })
})
