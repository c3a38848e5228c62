#!/usr/bin/env node
// The README's two commands, `npm start` and `npm test`, and `npm run bench`. Needs only Node and
// npm: it gets pnpm through npx, installs, builds, and then starts the service, runs every check
// and test, or runs the benchmark.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serve } from './serve.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const PNPM_VERSION = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.split('@')[1]
const isWindows = process.platform === 'win32'

// Node 22 LTS is the runtime (CI and the image use it). 20.19 and later still run everything
// (the console's build needs 20.19); this says so in one line. Older ones stop here.
const [nodeMajor, nodeMinor] = process.versions.node.split('.').map(Number)
if (nodeMajor < 20 || (nodeMajor === 20 && nodeMinor < 19)) {
  console.error(
    `Node ${process.versions.node} is too old: install Node 22 LTS (https://nodejs.org/en/download).`,
  )
  process.exit(1)
}
if (nodeMajor < 22) {
  console.warn(
    `note: Node ${process.versions.node} works, but this project targets Node 22 LTS (20 is past its end of life).`,
  )
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', shell: isWindows, ...options })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

// Always the pinned pnpm through npx, never a global one: a global pnpm 10 switches versions on its
// own (or refuses to, when it cannot verify the download) and lays node_modules out differently.
let announced = false
function pnpm(args, options) {
  if (!announced) console.log(`using pnpm ${PNPM_VERSION} (pinned in package.json) through npx`)
  announced = true
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
  // The service and the admin console it serves under /console (apps/console/dist, CONSOLE_DIR).
  pnpm([
    'turbo',
    'run',
    'build',
    '--filter=@credential-service/all-in-one...',
    '--filter=@credential-service/console',
    '--output-logs=errors-only',
  ])
  serve(['--enable-source-maps', '--max-semi-space-size=4', 'apps/all-in-one/dist/main.js'], root)
} else if (command === 'test') {
  pnpm(['exec', 'tsc', '-p', 'tsconfig.json'])
  // The admin console's browser code: a program of its own (DOM, no Node types; scripts/tsconfig.test.ts).
  pnpm(['exec', 'tsc', '-p', 'apps/console/tsconfig.json'])
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
