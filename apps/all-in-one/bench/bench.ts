/**
 * `pnpm bench`: starts the all-in-one service as a separate process (embedded database, or
 * PostgreSQL with BENCH_DATABASE_URL), drives complete issuance and presentation flows over real
 * HTTP at concurrency 1, 8 and 32, and reports flows/s, latency percentiles, server CPU per flow
 * (from the server process's own CPU time) and RSS. Writes bench-results/bench.json and .md.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import { CompactEncrypt, decodeJwt, generateKeyPair, importJWK, type JWK } from 'jose'
import { issueOverHttp, kbSigner } from '../test/wallet'

const root = new URL('../../..', import.meta.url).pathname
const FLOWS_PER_LEVEL = Number(process.env.BENCH_FLOWS ?? 200)
const LEVELS = [1, 8, 32]
const TICK_MS = 10 // Linux USER_HZ: /proc reports CPU time in 1/100 s

// biome-ignore lint/suspicious/noExplicitAny: loosely typed JSON answers
type Json = Record<string, any>

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS
}
function rssMb(pid: number): number {
  const line =
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:')) ?? '0'
  return Number(line.replace(/\D+/g, '')) / 1024
}

async function start(): Promise<{ child: ChildProcess; base: string; dataDir: string }> {
  const port = 43_000 + Math.floor(Math.random() * 5000)
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-'))
  const base = `http://127.0.0.1:${port}`
  // BENCH_PROFILE=<dir>: V8 CPU profiles of the server, for finding hot paths.
  const profile = process.env.BENCH_PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
    : []
  const child = spawn(process.execPath, [...profile, 'apps/all-in-one/dist/main.js'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: base,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      KEY_ROTATION_CHECK_SECONDS: '0',
      ...(process.env.BENCH_DATABASE_URL ? { DATABASE_URL: process.env.BENCH_DATABASE_URL } : {}),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  for (let i = 0; i < 300; i++) {
    if ((await fetch(`${base}/healthz`).catch(() => undefined))?.ok) return { child, base, dataDir }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('the service did not start')
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0

async function main() {
  const { child, base, dataDir } = await start()
  const pid = child.pid as number
  const secrets = JSON.parse(readFileSync(join(dataDir, 'dev-secrets.json'), 'utf8'))
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Json> => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`)
    return response.status === 204 ? {} : ((await response.json()) as Json)
  }
  const form = async (url: string, body: Record<string, string>) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body),
    })
    if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`)
    return (await response.json()) as Json
  }

  // Set-up through the management API.
  const rootToken = (
    await post('/api/oauth2/token', {
      grant_type: 'client_credentials',
      client_id: secrets.AUTH_CLIENT_ID,
      client_secret: secrets.AUTH_CLIENT_SECRET,
    })
  ).access_token
  await post('/api/tenants', { id: 'bench', name: 'Bench' }, { authorization: `Bearer ${rootToken}` })
  const roles = [
    'key:manage',
    'issuance:config',
    'issuance:offer',
    'presentation:config',
    'presentation:request',
  ]
  const client = await post('/api/tenants/bench/clients', { roles }, { authorization: `Bearer ${rootToken}` })
  const token = (
    await post('/api/oauth2/token', {
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    })
  ).access_token
  const auth = { authorization: `Bearer ${token}` }
  await post(
    '/api/key-chains',
    { source: 'generate', id: 'keys', certificate: { mode: 'internal-ca', subject: 'CN=Bench,C=DE' } },
    auth,
  )
  await post(
    '/api/credentials',
    {
      id: 'pid',
      config: { format: 'dc+sd-jwt', vct: 'urn:bench:pid' },
      keyChainId: 'keys',
      fields: [
        { path: ['given_name'], type: 'string', disclosable: true },
        { path: ['age_over_18'], type: 'boolean', disclosable: true },
      ],
    },
    auth,
  )
  await post(
    '/api/presentations',
    {
      id: 'age',
      keyChainId: 'keys',
      responseMode: 'direct_post.jwt',
      dcqlQuery: {
        credentials: [
          {
            id: 'pid',
            format: 'dc+sd-jwt',
            meta: { vct_values: ['urn:bench:pid'] },
            claims: [{ path: ['age_over_18'] }],
          },
        ],
      },
    },
    auth,
  )
  const holder = await generateKeyPair('ES256')
  const _issuer = `${base}/issuers/bench`

  async function issuance(): Promise<string> {
    await (await fetch(`${base}/.well-known/openid-credential-issuer/issuers/bench`)).json()
    const issued = await issueOverHttp({
      apiBase: base,
      auth,
      configurationId: 'pid',
      claims: { given_name: 'Erika', age_over_18: true },
      holder,
    })
    return issued.credential
  }

  const credential = await issuance()
  const presenter = new SDJwtVcInstance({
    hasher: digest,
    saltGenerator: generateSalt,
    kbSignAlg: 'ES256',
    kbSigner: kbSigner(holder.privateKey),
  })

  async function presentation(): Promise<void> {
    const created = await post('/api/presentation-requests', { presentationConfigId: 'age' }, auth)
    const request = decodeJwt(await (await fetch(created.requestUri)).text()) as Json
    const vp = await presenter.present(
      credential,
      { age_over_18: true },
      {
        kb: { payload: { iat: Math.floor(Date.now() / 1000), nonce: request.nonce, aud: request.client_id } },
      },
    )
    const key = request.client_metadata.jwks.keys[0] as JWK
    const jwe = await new CompactEncrypt(
      new TextEncoder().encode(JSON.stringify({ vp_token: { pid: [vp] }, state: request.state })),
    )
      .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128GCM', kid: key.kid as string })
      .encrypt(await importJWK(key, 'ECDH-ES'))
    await form(request.response_uri, { response: jwe })
    const session = (await (
      await fetch(`${base}/api/sessions/${created.sessionId}`, { headers: auth })
    ).json()) as Json
    if (session.status !== 'verified')
      throw new Error(`presentation ${session.status}: ${session.failureReason}`)
  }

  const idleRss = rssMb(pid)
  const results: Json[] = []
  for (const [name, flow] of [
    ['issuance (SD-JWT VC)', issuance],
    ['presentation (direct_post.jwt)', presentation],
  ] as const) {
    for (const concurrency of LEVELS) {
      const latencies: number[] = []
      let errors = 0
      let next = 0
      let peakRss = rssMb(pid)
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, rssMb(pid))
      }, 100)
      const cpuBefore = cpuMs(pid)
      const started = performance.now()
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < FLOWS_PER_LEVEL) {
            next++
            const t0 = performance.now()
            try {
              await flow()
              latencies.push(performance.now() - t0)
            } catch (error) {
              errors++
              if (errors === 1) console.error(`${name}: ${(error as Error).message}`)
            }
          }
        }),
      )
      const seconds = (performance.now() - started) / 1000
      clearInterval(sampler)
      const cpu = cpuMs(pid) - cpuBefore
      latencies.sort((a, b) => a - b)
      const row = {
        flow: name,
        concurrency,
        flows: latencies.length,
        flowsPerSecond: Number((latencies.length / seconds).toFixed(1)),
        p50Ms: Number(percentile(latencies, 50).toFixed(1)),
        p95Ms: Number(percentile(latencies, 95).toFixed(1)),
        p99Ms: Number(percentile(latencies, 99).toFixed(1)),
        serverCpuMsPerFlow: Number((cpu / Math.max(1, latencies.length)).toFixed(2)),
        peakRssMb: Number(peakRss.toFixed(0)),
        errors,
      }
      results.push(row)
      console.log(JSON.stringify(row))
    }
  }
  child.kill('SIGTERM')
  const out = join(root, 'bench-results')
  mkdirSync(out, { recursive: true })
  const database = process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'
  writeFileSync(
    join(out, 'bench.json'),
    `${JSON.stringify({ database, idleRssMb: Number(idleRss.toFixed(0)), results }, null, 2)}\n`,
  )
  const table = [
    `All-in-one process, ${database}, ${FLOWS_PER_LEVEL} flows per level; idle RSS ${idleRss.toFixed(0)} MB.`,
    '',
    '| flow | concurrency | flows/s | p50 ms | p95 ms | p99 ms | server CPU ms/flow | peak RSS MB | errors |',
    '|---|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.flow} | ${r.concurrency} | ${r.flowsPerSecond} | ${r.p50Ms} | ${r.p95Ms} | ${r.p99Ms} | ${r.serverCpuMsPerFlow} | ${r.peakRssMb} | ${r.errors} |`,
    ),
  ].join('\n')
  writeFileSync(join(out, 'bench.md'), `${table}\n`)
  console.log(`\n${table}`)
  if (results.some((r) => r.errors > 0)) process.exitCode = 1
}

await main()
