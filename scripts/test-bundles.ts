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

/** The apps whose `build` script is `node ../../scripts/build-app.mjs <entries>`, with its arguments. */
function bundledApps(): { app: string; args: string[] }[] {
  return readdirSync(join(root, 'apps')).flatMap((app) => {
    const manifest = join(root, 'apps', app, 'package.json')
    const script: string | undefined = existsSync(manifest)
      ? JSON.parse(readFileSync(manifest, 'utf8')).scripts?.build
      : undefined
    const [command, ...args] = script?.split(/\s+/) ?? []
    return command === 'node' && args[0]?.endsWith('build-app.mjs') ? [{ app, args }] : []
  })
}

/** A digest of files, their paths relative to the root included. */
function digestOf(files: string[]): string {
  const hash = createHash('sha256')
  for (const file of [...files].sort())
    hash.update(relative(root, file)).update('\0').update(readFileSync(file))
  return hash.digest('hex')
}

/** Runs an app's build script into TEST_BUNDLE_DIR. */
function build(app: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    let stderr = ''
    const child = spawn(process.execPath, args, {
      cwd: join(root, 'apps', app),
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

/** Each bundled app with its build arguments and the digest of its bundle's inputs. */
export function bundleInputs(): { app: string; args: string[]; digest: string; stamp: string }[] {
  const shared = digestOf([
    ...readdirSync(join(root, 'packages')).flatMap((name) => filesUnder(join(root, 'packages', name, 'src'))),
    ...filesUnder(join(root, 'packages/db-schema/migrations')),
    join(root, 'scripts/build-app.mjs'),
  ])
  return bundledApps().map(({ app, args }) => ({
    app,
    args,
    digest: `${shared} ${digestOf(
      [app, ...appsCompiledIn(app)].flatMap((name) => [
        ...filesUnder(join(root, 'apps', name, 'src')),
        join(root, 'apps', name, 'package.json'),
      ]),
    )}`,
    stamp: join(root, 'apps', app, TEST_BUNDLE_DIR, '.inputs'),
  }))
}

/**
 * The other apps an app's bundle compiles in (all-in-one: management, issuer, verifier), from the
 * workspace packages its manifest names: their sources are inputs of its bundle too.
 */
function appsCompiledIn(app: string): string[] {
  const manifest = JSON.parse(readFileSync(join(root, 'apps', app, 'package.json'), 'utf8'))
  return Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })
    .filter((name) => name.startsWith('@credential-service/'))
    .map((name) => name.slice('@credential-service/'.length))
    .filter((name) => existsSync(join(root, 'apps', name, 'src')))
}

/**
 * The admin console's static build for the tests (`apps/console/dist-test`, the CONSOLE_DIR of the
 * processes that serve it): its build script and the digest of what goes into it, its own files
 * and the packages it compiles in (core-domain's schemas, the SDK).
 */
export function consoleInputs(): { app: string; args: string[]; digest: string; stamp: string } {
  const dir = join(root, 'apps/console')
  const digest = digestOf([
    ...filesUnder(join(dir, 'src')),
    ...filesUnder(join(dir, 'scripts')),
    ...['index.html', 'vite.config.ts', 'package.json'].map((file) => join(dir, file)),
    ...['core-domain', 'sdk'].flatMap((name) => filesUnder(join(root, 'packages', name, 'src'))),
  ])
  return { app: 'console', args: ['scripts/build.mjs'], digest, stamp: join(dir, TEST_BUNDLE_DIR, '.inputs') }
}

/** The console's build for the tests, relative to the root (the processes' CONSOLE_DIR). */
export const TEST_CONSOLE_DIR = `apps/console/${TEST_BUNDLE_DIR}`

/**
 * Builds each app whose bundle is missing or whose inputs changed since it was built: its sources
 * and manifest, the packages compiled in, the migrations shipped beside it, the build script; and
 * the console's static build likewise. TEST_FROM_SOURCE skips the bundles, not the console (a
 * browser cannot run TypeScript).
 */
export async function buildTestBundles(): Promise<void> {
  const targets = process.env.TEST_FROM_SOURCE ? [consoleInputs()] : [...bundleInputs(), consoleInputs()]
  await Promise.all(
    targets.map(async ({ app, args, digest, stamp }) => {
      if (existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) return
      await build(app, args)
      writeFileSync(stamp, digest)
    }),
  )
}
