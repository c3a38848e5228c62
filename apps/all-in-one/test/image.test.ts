/**
 * The image without a docker engine: the bundles laid out as docker/Dockerfile lays them out (its
 * build commands, COPY, ENV, RUN, USER, WORKDIR and ENTRYPOINT lines, read from the file), started
 * through the same entrypoint script, as the image's non-root user when this test runs as root.
 * Also `npm start` (scripts/run.mjs), which needs the same bundles: one file, so that no two test
 * files rebuild apps/*\/dist at once.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import {
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { networkInterfaces, tmpdir } from 'node:os'
import { dirname, isAbsolute, join } from 'node:path'
import { SERVICE_VERSION } from '@credential-service/server-kit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'

const root = new URL('../../..', import.meta.url).pathname
const PNPM_VERSION = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.split('@')[1]
// As root, processes switch to the image's USER (util-linux setpriv); otherwise they run as we do.
const isRoot = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0

interface Instruction {
  keyword: string
  args: string
}

/** The instructions of each stage of a Dockerfile, continuation lines joined, comments dropped. */
export function parseDockerfile(text: string): Instruction[][] {
  const stages: Instruction[][] = []
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(/\s+/)
    const instruction = { keyword: keyword.toUpperCase(), args: rest.join(' ') }
    if (instruction.keyword === 'FROM') stages.push([])
    stages.at(-1)?.push(instruction)
  }
  return stages
}

const argsOf = (stage: Instruction[], keyword: string) =>
  stage.filter((i) => i.keyword === keyword).map((i) => i.args)
const execForm = (args: string) => JSON.parse(args) as string[]

/** Runs a command and fails the test with its output when it fails. */
function sh(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 600_000, ...options })
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${result.stderr}${result.stdout}`)
  return result
}

/** Sets every file and folder below `dir` read-only (or back), leaving symlinks alone. */
function setReadOnly(dir: string, readOnly: boolean) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    const stat = lstatSync(path)
    if (stat.isSymbolicLink()) continue
    if (stat.isDirectory()) {
      if (!readOnly) chmodSync(path, 0o755)
      setReadOnly(path, readOnly)
      if (readOnly) chmodSync(path, 0o555)
    } else chmodSync(path, readOnly ? stat.mode & 0o555 : stat.mode | 0o200)
  }
}

interface Image {
  /** The image's file system root (its `/`). */
  fs: string
  env: Record<string, string>
  workdir: string
  entrypoint: string[]
  cmd: string[]
  /** uid and gid of the USER line. */
  user: [number, number] | undefined
  /** The production dependencies the Dockerfile's `pnpm deploy` wrote. */
  prod: string
}

const scratch = mkdtempSync(join(tmpdir(), 'image-'))
/** The image's DATA_DIR once its default command ran: an embedded database, migrated, and its secrets. */
let imageData: string | undefined
// The image's user must be able to reach the folders below.
chmodSync(scratch, 0o755)
afterAll(() => {
  const app = join(scratch, 'fs', 'app')
  if (existsSync(app)) setReadOnly(app, false)
  rmSync(scratch, { recursive: true, force: true })
})

/**
 * Builds what docker/Dockerfile builds, on this machine: the build stage's RUN commands that
 * produce files (pnpm through npx, in the version package.json pins), with /src being this
 * checkout; then the runtime stage's layout under `scratch/fs`.
 */
function assembleImage(): Image {
  const [build, runtime, ...more] = parseDockerfile(readFileSync(join(root, 'docker/Dockerfile'), 'utf8'))
  if (!build || !runtime || more.length) throw new Error('expected a build and a runtime stage')
  const buildDir = join(scratch, 'build')
  mkdirSync(buildDir)
  // Build-stage paths: /src is the checkout (its WORKDIR), any other absolute path goes to buildDir.
  expect(argsOf(build, 'WORKDIR')).toStrictEqual(['/src'])
  const fromBuild = (path: string) =>
    path === '/src' || path.startsWith('/src/') ? join(root, path.slice(4)) : join(buildDir, path)

  // `pnpm` on PATH is the pinned pnpm through npx (the image's corepack gets the same version).
  const bin = join(scratch, 'bin')
  mkdirSync(bin)
  writeFileSync(join(bin, 'pnpm'), `#!/bin/sh\nexec npx -y pnpm@${PNPM_VERSION} "$@"\n`, { mode: 0o755 })
  const buildEnv = { ...process.env, PATH: `${bin}:${process.env.PATH}` }
  const steps = argsOf(build, 'RUN').filter(
    (run) => run.includes('pnpm turbo') || run.includes('pnpm deploy'),
  )
  expect(steps.length).toBeGreaterThan(0)
  for (const step of steps) {
    const local = step.replace(
      /(^|\s)(\/[\w./-]+)/g,
      (_m, space: string, path: string) => space + fromBuild(path),
    )
    sh('sh', ['-c', local], { cwd: root, env: buildEnv })
  }

  const fs = join(scratch, 'fs')
  const workdir = argsOf(runtime, 'WORKDIR').at(-1) ?? '/'
  const inImage = (path: string) => join(fs, isAbsolute(path) ? path : join(workdir, path))
  for (const copy of argsOf(runtime, 'COPY')) {
    const parts = copy.split(/\s+/)
    const from = parts.find((part) => part.startsWith('--from='))
    const [source, target] = parts.filter((part) => !part.startsWith('--')) as [string, string]
    const sourcePath = from ? fromBuild(source) : join(root, source)
    mkdirSync(dirname(inImage(target)), { recursive: true })
    // Docker copies symlinks as they are: pnpm's node_modules is relative symlinks into .pnpm.
    cpSync(sourcePath, inImage(target), { recursive: true, verbatimSymlinks: true })
  }
  for (const run of argsOf(runtime, 'RUN')) {
    for (const command of run.split('&&').map((c) => c.trim().split(/\s+/))) {
      const [name, ...args] = command
      if (name === 'mkdir' && args[0] === '-p')
        for (const dir of args.slice(1)) mkdirSync(inImage(dir), { recursive: true })
      else if (name === 'chown' && args.length === 2) {
        const [uid, gid] = (args[0] as string).split(':').map(Number) as [number, number]
        if (isRoot) chownSync(inImage(args[1] as string), uid, gid)
      } else throw new Error(`image.test.ts does not know this runtime RUN command yet: ${command.join(' ')}`)
    }
  }
  const env: Record<string, string> = {}
  for (const line of argsOf(runtime, 'ENV')) {
    for (const [, key, value] of line.matchAll(/(\w+)=(\S+)/g)) env[key as string] = value as string
  }
  const user = argsOf(runtime, 'USER').at(-1)
  // The node binary the image's base provides.
  mkdirSync(join(fs, 'usr/local/bin'), { recursive: true })
  copyFileSync(process.execPath, join(fs, 'usr/local/bin/node'))
  chmodSync(join(fs, 'usr/local/bin/node'), 0o755)
  return {
    fs,
    env,
    workdir,
    entrypoint: execForm(argsOf(runtime, 'ENTRYPOINT').at(-1) ?? '[]'),
    cmd: execForm(argsOf(runtime, 'CMD').at(-1) ?? '[]'),
    user: user ? (user.split(':').map(Number) as [number, number]) : undefined,
    prod: fromBuild('/prod'),
  }
}

describe('issue 13: the image (docker/Dockerfile), run as the image runs it', () => {
  let image: Image
  /** Absolute paths in the image's ENV (DATA_DIR=/data) point into its file system here. */
  const imageEnv = (extra: Record<string, string> = {}) => {
    const env: Record<string, string> = {}
    for (const [key, value] of Object.entries({ ...image.env, ...extra }))
      env[key] = value.startsWith('/') ? join(image.fs, value) : value
    return { ...env, PATH: `${join(image.fs, 'usr/local/bin')}:/usr/bin:/bin`, LOG_LEVEL: 'warn' }
  }
  /** `docker run IMAGE ...args`: the entrypoint in the WORKDIR, as the USER when we are root. */
  const run = (args: string[], extra: Record<string, string> = {}) => {
    const [entry, ...entryArgs] = image.entrypoint.map((part) =>
      part.startsWith('/') ? join(image.fs, part) : part,
    )
    const command = [entry as string, ...entryArgs, ...(args.length ? args : image.cmd)]
    const asUser =
      isRoot && image.user
        ? ['setpriv', `--reuid=${image.user[0]}`, `--regid=${image.user[1]}`, '--clear-groups', ...command]
        : command
    return {
      file: asUser[0] as string,
      args: asUser.slice(1),
      cwd: join(image.fs, image.workdir),
      env: imageEnv(extra),
    }
  }
  const runSync = (args: string[], extra?: Record<string, string>) => {
    const { file, args: argv, ...options } = run(args, extra)
    return spawnSync(file, argv, { ...options, encoding: 'utf8', timeout: 120_000 })
  }
  const dataDir = () => join(image.fs, image.env.DATA_DIR ?? '/data')

  beforeAll(() => {
    image = assembleImage()
    // The app folder is read-only to the process, as a root-owned /app (or readOnlyRootFilesystem) is.
    setReadOnly(join(image.fs, 'app'), true)
  }, 900_000)

  it('runs as a non-root user, with /app read-only and DATA_DIR writable', () => {
    expect(image.user?.[0]).toBeGreaterThan(0)
    expect(image.env).toMatchObject({ HOST: '0.0.0.0', DATA_DIR: expect.stringMatching(/^\//) })
    const probe = runSync(['config:migrate'], {})
    // The usage line proves the entrypoint and the bundle run as that user from a read-only /app.
    expect(probe.stderr).toContain('usage: config:migrate <dir> --out <newdir>')
    expect(probe.status).toBe(2)
  })

  it('a production prune: no devDependency and no workspace source in node_modules', () => {
    const store = readdirSync(join(image.prod, 'node_modules', '.pnpm'))
    for (const tool of ['vitest', 'typescript', '@biomejs+biome', 'esbuild', 'turbo', 'tsx', 'drizzle-kit'])
      expect(
        store.filter((entry) => entry.startsWith(`${tool}@`)),
        tool,
      ).toStrictEqual([])
    expect(existsSync(join(image.fs, 'app/node_modules/@credential-service'))).toBe(false)
    expect(existsSync(join(image.fs, 'app/node_modules/fastify/package.json'))).toBe(true)
  })

  it('.dockerignore keeps node_modules, .data, .git and bench results out of the build context', () => {
    const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n')
    expect(ignored).toEqual(
      expect.arrayContaining(['**/node_modules', '**/dist', '**/.data', '.git', 'bench-results', '.env']),
    )
    // Everything the Dockerfile copies from the context stays in it.
    expect(ignored).toContain('!docker/entrypoint.sh')
  })

  it('an operator command without MASTER_SECRET stops with status 2 naming it and writes nothing', () => {
    const result = runSync(['config:import', '/config'])
    expect(result.status, result.stderr).toBe(2)
    expect(result.stderr).toContain('MASTER_SECRET is required')
    expect(readdirSync(dataDir())).toStrictEqual([])
  })

  it.each(['management', 'issuer', 'verifier'])(
    '%s: the bundle loads from the image (no missing module) and asks for DATABASE_URL',
    (app) => {
      const result = runSync([app], {
        PUBLIC_URL: 'http://localhost',
        MASTER_SECRET: 'image-test-master-secret-0123456789abcdef',
        AUTH_CLIENT_ID: 'root',
        AUTH_CLIENT_SECRET: 'image-test-root-secret-0123',
      })
      expect(result.stderr).not.toContain('ERR_MODULE_NOT_FOUND')
      expect(result.stderr).toContain(`DATABASE_URL is required by the standalone ${app} app`)
      expect(result.status).toBe(1)
    },
    120_000,
  )

  it('the default command serves /, /api/health, /healthz, /readyz and /console/, and stops on SIGTERM with 0', async () => {
    const port = await freePort()
    const { file, args, ...options } = run([], { PORT: String(port) })
    const child: ChildProcess = spawn(file, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
    // Both streams: the log lines (stdout) say why a shutdown did not exit 0.
    let stderr = ''
    child.stderr?.on('data', (chunk) => {
      stderr += chunk
    })
    child.stdout?.on('data', (chunk) => {
      stderr += chunk
    })
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    try {
      const base = `http://127.0.0.1:${port}`
      let up = false
      for (let attempt = 0; attempt < 600 && !up && child.exitCode === null; attempt++) {
        up = (await fetch(`${base}/healthz`).catch(() => undefined))?.ok ?? false
        if (!up) await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(up, stderr).toBe(true)
      const get = async (path: string) => {
        const response = await fetch(`${base}${path}`)
        return [response.status, await response.json()]
      }
      expect(await get('/')).toStrictEqual([200, { name: 'credential-service' }])
      expect(await get('/healthz')).toStrictEqual([200, { status: 'ok' }])
      expect(await get('/readyz')).toStrictEqual([200, { status: 'ok' }])
      expect(await get('/api/health')).toStrictEqual([
        200,
        { status: 'ok', version: SERVICE_VERSION, database: { status: 'up', kind: 'pglite' } },
      ])
      // Issue 22: the admin console's build is in the image (CONSOLE_DIR), with its scripts.
      const page = await fetch(`${base}/console/`)
      expect(page.status).toBe(200)
      const html = await page.text()
      const script = /<script type="module"[^>]* src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1]
      expect(script, html).toBeDefined()
      const asset = await fetch(`${base}${script}`)
      expect(asset.status).toBe(200)
      // Read to the end: an unread body keeps the connection busy, and the server's close waits
      // for it until its bound (exit 1), which is what a stalled client does in production.
      expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(0)
      // All-in-one mode keeps its generated secrets and database in DATA_DIR, the writable folder.
      expect(readdirSync(dataDir()).sort()).toStrictEqual(['dev-secrets.json', 'pglite'])
      imageData = dataDir()
    } finally {
      child.kill('SIGTERM')
    }
    expect(await exited, stderr).toBe(0)
  }, 300_000)

  it('after it, upgrade:check finds the database and its secret in DATA_DIR: nothing blocks', () => {
    const result = runSync(['upgrade:check'])
    expect(result.stdout, result.stderr).toContain('nothing blocks the upgrade')
    expect(result.status).toBe(0)
  }, 120_000)
})

describe('issue 13: npm start (scripts/run.mjs start)', () => {
  it('listens on 127.0.0.1 when HOST is unset, and stops on SIGTERM as on Ctrl-C: exit 0, port closed', async () => {
    const port = await freePort()
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      // The image's data folder when its tests made one: npm start opens it as a second start
      // does, instead of creating and migrating another embedded database.
      DATA_DIR: imageData ?? join(scratch, 'dev-data'),
      LOG_LEVEL: 'info',
    }
    delete env.HOST
    delete env.DATABASE_URL
    const child = spawn(process.execPath, ['scripts/run.mjs', 'start'], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
    })
    child.stderr.on('data', (chunk) => {
      output += chunk
    })
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    try {
      let up = false
      for (let attempt = 0; attempt < 1500 && !up && child.exitCode === null; attempt++) {
        up = (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok ?? false
        if (!up) await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(up, output).toBe(true)
      expect(output).toContain(`Server listening at http://127.0.0.1:${port}`)
      expect(output).toContain(`using pnpm ${PNPM_VERSION} (pinned in package.json) through npx`)
      // Not on the machine's other addresses.
      const external = Object.values(networkInterfaces())
        .flat()
        .find((address) => address && address.family === 'IPv4' && !address.internal)
      if (external) {
        const error = await fetch(`http://${external.address}:${port}/healthz`).then(
          () => undefined,
          (e: Error & { cause?: { code?: string } }) => e.cause?.code,
        )
        expect(error).toBe('ECONNREFUSED')
      }
    } finally {
      child.kill('SIGTERM')
    }
    const started = Date.now()
    expect(await exited, output).toBe(0)
    expect(Date.now() - started).toBeLessThan(30_000)
    // The server process is gone too, not left behind by its parent.
    expect(
      await fetch(`http://127.0.0.1:${port}/healthz`).then(
        () => 'open',
        () => 'closed',
      ),
    ).toBe('closed')
  }, 600_000)
})
