/**
 * The processes tests start (`node <app>`, an operator command) run the apps' bundles, as the
 * image does: vitest's global setup builds them once per run into `apps/<app>/dist-test`, and
 * only when a source changed. A bundle starts on about half the CPU of its sources through tsx,
 * and the suite starts some hundred processes on a two-core machine (issue 21). Not `dist`:
 * image.test.ts rebuilds that with the Dockerfile's own commands while other files run.
 *
 * TEST_FROM_SOURCE=1 starts the TypeScript sources through tsx instead.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'

const root = new URL('..', import.meta.url).pathname
export const TEST_BUNDLE_DIR = 'dist-test'
const APPS = ['management', 'issuer', 'verifier', 'all-in-one']

/** Node's arguments that run `apps/<app>/src/<file>.ts`: its bundle, or its source with TEST_FROM_SOURCE. */
export function appEntry(app: string, file = 'main'): string[] {
  return process.env.TEST_FROM_SOURCE
    ? ['--import', 'tsx', `apps/${app}/src/${file}.ts`]
    : [`apps/${app}/${TEST_BUNDLE_DIR}/${file}.js`]
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
}

/** A digest of everything a bundle is built from: the app's sources and manifest, the packages, the build script. */
function inputsDigest(app: string): string {
  const packages = readdirSync(join(root, 'packages')).flatMap((name) =>
    filesUnder(join(root, 'packages', name, 'src')),
  )
  const files = [
    ...filesUnder(join(root, 'apps', app, 'src')),
    ...packages,
    ...filesUnder(join(root, 'packages/db-schema/migrations')),
    join(root, 'apps', app, 'package.json'),
    join(root, 'scripts/build-app.mjs'),
  ].sort()
  const hash = createHash('sha256')
  for (const file of files) hash.update(relative(root, file)).update('\0').update(readFileSync(file))
  return hash.digest('hex')
}

/** Runs the app's own build script (`node ../../scripts/build-app.mjs <entries>`) into TEST_BUNDLE_DIR. */
function build(app: string): Promise<void> {
  const cwd = join(root, 'apps', app)
  const script: string = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8')).scripts.build
  const args = script.split(/\s+/).slice(script.split(/\s+/).indexOf('node') + 1)
  return new Promise((resolve, reject) => {
    let stderr = ''
    const child = spawn(process.execPath, args, {
      cwd,
      env: { ...process.env, BUILD_OUTDIR: TEST_BUNDLE_DIR },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on('error', reject)
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`building ${app} for the tests: ${stderr}`)),
    )
  })
}

/** Builds each app whose bundle is missing or older than its inputs. */
export async function buildTestBundles(): Promise<void> {
  if (process.env.TEST_FROM_SOURCE) return
  await Promise.all(
    APPS.map(async (app) => {
      const stamp = join(root, 'apps', app, TEST_BUNDLE_DIR, '.inputs')
      const digest = inputsDigest(app)
      if (existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) return
      await build(app)
      writeFileSync(stamp, digest)
    }),
  )
}
