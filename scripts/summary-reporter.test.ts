import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..')
const fixtures = join(import.meta.dirname, 'fixtures/summary-reporter')
/** The closing line as CI parses it. */
const CLOSING_LINE = /^Tests: (\d+) passed, (\d+) failed(?:, (\d+) skipped)?$/m

/** A real vitest run of the named fixture files with the summary reporter: its line and exit code. */
function runVitest(
  files: string[],
  slowest?: string[],
): Promise<{ passed: number; failed: number; skipped: number; exitCode: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--root', fixtures, ...files],
      { cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } },
    )
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.on('error', reject)
    child.on('close', (exitCode) => {
      const match = CLOSING_LINE.exec(output)
      if (!match) return reject(new Error(`no closing line in:\n${output}`))
      const listed = /\nSlowest files:\n((?: +[\d.]+ s {2}\S+\n)+)/.exec(output)?.[1] ?? ''
      slowest?.push(
        ...listed
          .split('\n')
          .filter(Boolean)
          .map((line) => line.trim().split(/\s+/)[2] as string),
      )
      resolve({
        passed: Number(match[1]),
        failed: Number(match[2]),
        skipped: Number(match[3] ?? 0),
        exitCode: exitCode ?? -1,
      })
    })
  })
}

describe('issue 43 item 2: the closing line agrees with the exit code', () => {
  it.concurrent.each([
    ['passing', { passed: 2, failed: 0, skipped: 1, exitCode: 0 }],
    // The two tests did not run: the hook's failure is counted, they are not "skipped".
    ['before-all', { passed: 0, failed: 1, skipped: 0, exitCode: 1 }],
    ['after-all', { passed: 1, failed: 1, skipped: 0, exitCode: 1 }],
    ['unhandled', { passed: 1, failed: 1, skipped: 0, exitCode: 1 }],
    ['import-error', { passed: 0, failed: 1, skipped: 0, exitCode: 1 }],
  ])(
    '%s.fixture.ts',
    async (name, expected) => {
      expect(await runVitest([`${name}.fixture.ts`])).toStrictEqual(expected)
    },
    60_000,
  )

  it('every fixture at once: each failure counted once, exit code 1; the slowest files named before it', async () => {
    const slowest: string[] = []
    expect(await runVitest([], slowest)).toStrictEqual({ passed: 4, failed: 4, skipped: 1, exitCode: 1 })
    expect(slowest.toSorted()).toStrictEqual([
      'after-all.fixture.ts',
      'before-all.fixture.ts',
      'import-error.fixture.ts',
      'passing.fixture.ts',
      'unhandled.fixture.ts',
    ])
  }, 60_000)
})
