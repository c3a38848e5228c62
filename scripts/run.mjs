#!/usr/bin/env node
// The README's two commands, `npm start` and `npm test`, and `npm run bench`. Needs only Node 20
// and npm: it gets pnpm through npx, installs, builds, and then starts the service, runs every
// check and test, or runs the benchmark.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const PNPM_VERSION = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.split('@')[1]
const isWindows = process.platform === 'win32'

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', shell: isWindows, ...options })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

function pnpm(args, options) {
  const local = spawnSync('pnpm', ['--version'], { cwd: root, encoding: 'utf8', shell: isWindows })
  if (local.status === 0 && local.stdout.trim() === PNPM_VERSION) return run('pnpm', args, options)
  return run('npx', ['-y', `pnpm@${PNPM_VERSION}`, ...args], options)
}

/** Installs only when the lockfile changed since the last install on this machine. */
function install() {
  const lock = createHash('sha256')
    .update(readFileSync(join(root, 'pnpm-lock.yaml')))
    .digest('hex')
  const marker = join(root, 'node_modules', '.install-stamp')
  if (existsSync(marker) && readFileSync(marker, 'utf8') === lock) return
  pnpm(['install', '--frozen-lockfile', '--config.confirmModulesPurge=false'])
  writeFileSync(marker, lock)
}

const command = process.argv[2]
install()
if (command === 'start') {
  pnpm(['turbo', 'run', 'build', '--filter=@credential-service/all-in-one...', '--output-logs=errors-only'])
  run(process.execPath, ['--enable-source-maps', '--max-semi-space-size=4', 'apps/all-in-one/dist/main.js'])
} else if (command === 'test') {
  pnpm(['turbo', 'run', 'typecheck', '--output-logs=errors-only'])
  pnpm(['run', 'lint'])
  pnpm(['exec', 'vitest', 'run'])
} else if (command === 'bench') {
  // `npm run bench [-- --separate]`: the README's Benchmarks section.
  pnpm(['turbo', 'run', 'build', '--filter=./apps/*', '--output-logs=errors-only'])
  run(process.execPath, ['--import', 'tsx', 'apps/all-in-one/bench/bench.ts', ...process.argv.slice(3)])
} else {
  console.error('usage: node scripts/run.mjs start|test|bench')
  process.exit(2)
}
