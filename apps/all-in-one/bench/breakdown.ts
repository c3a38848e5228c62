/**
 * `node --import tsx apps/all-in-one/bench/breakdown.ts <profile> [<shorter profile>] <flows>`:
 * where a server process's CPU went, from V8 CPU profiles written under BENCH_PROFILE. Self time
 * is grouped by what runs it (framework, logging, metrics, database driver, crypto, …); module
 * loading at start is left out. With a second profile of a shorter run of the same flow, the
 * shorter one is subtracted group by group, so set-up work (bcrypt, key generation) drops out and
 * `flows` is the difference in flows between the two runs.
 */
import { readFileSync } from 'node:fs'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

/** First match wins: a package or Node module prefix of the frame's URL, or a function name. */
const GROUPS: [string, RegExp][] = [
  [
    'start-up (module loading)',
    /node:internal\/modules|cjs-module-lexer|\(native (compileFunction|internalModuleStat|readPackageJSON|readFileUtf8)\)/,
  ],
  ['garbage collection', /^\(garbage collector\)$/],
  [
    'framework (fastify, routing, hooks)',
    /node_modules\/(fastify|find-my-way|avvio|light-my-request|@fastify\/(?!rate-limit|swagger)|fast-json-stringify|fast-querystring|safe-regex2|toad-cache|process-warning|abstract-logging|fastify-plugin|fastify-type-provider-zod)/,
  ],
  ['rate limits (@fastify/rate-limit)', /node_modules\/@fastify\/rate-limit/],
  [
    'logging (pino)',
    /node_modules\/(pino|sonic-boom|thread-stream|fast-redact|on-exit-leak-free|quick-format-unescaped)/,
  ],
  ['metrics (prom-client)', /node_modules\/(prom-client|tdigest|bintrees)/],
  ['database driver (postgres.js)', /node_modules\/postgres\//],
  ['query builder (drizzle-orm)', /node_modules\/drizzle-orm/],
  ['validation (zod)', /node_modules\/zod/],
  ['JOSE and SD-JWT (jose, @sd-jwt)', /node_modules\/(jose|@sd-jwt|js-base64)/],
  ['CBOR and COSE (cbor-x)', /node_modules\/(cbor-x|@auth0\/cose)/],
  [
    'X.509 (@peculiar)',
    /node_modules\/(@peculiar|asn1js|pvtsutils|pvutils|@noble|tsyringe|reflect-metadata)/,
  ],
  [
    'Node crypto (sign, verify, hash, cipher)',
    /node:internal\/crypto|node:crypto|\(native (signOneShot|verifyOneShot|.*Hmac|.*Hash|.*Cipher)/,
  ],
  [
    'sockets and HTTP (kernel writes included)',
    /node:(_http|net|internal\/(stream|streams|http|net|dns)|stream|http)|\(native (writeBuffer|writev|writeUtf8String|writeLatin1String|read|onStreamRead)\)/,
  ],
  ['Node runtime (events, timers, promises)', /node:|\(native|\(program\)/],
  ['the service', /\/(apps|packages)\//],
]

export function breakdown(profile: Profile): { group: string; ms: number }[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const totals = new Map<string, number>()
  for (const [index, id] of profile.samples.entries()) {
    const frame = byId.get(id)?.callFrame
    if (!frame || frame.functionName === '(idle)') continue
    const label = frame.url
      ? frame.url
      : frame.functionName.startsWith('(')
        ? frame.functionName
        : `(native ${frame.functionName})`
    const group = GROUPS.find(([, pattern]) => pattern.test(label))?.[0] ?? 'other libraries'
    totals.set(group, (totals.get(group) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000)
  }
  return [...totals].map(([group, ms]) => ({ group, ms })).sort((a, b) => b.ms - a.ms)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2)
  const flows = Number(args.pop())
  const [file, shorter] = args
  if (!file || !(flows > 0)) throw new Error('usage: breakdown.ts <profile> [<shorter profile>] <flows>')
  const read = (path: string) => breakdown(JSON.parse(readFileSync(path, 'utf8')) as Profile)
  const base = new Map(shorter ? read(shorter).map((row) => [row.group, row.ms]) : [])
  const rows = read(file)
    .filter((row) => !row.group.startsWith('start-up'))
    .map((row) => ({ group: row.group, ms: Math.max(0, row.ms - (base.get(row.group) ?? 0)) }))
    .sort((a, b) => b.ms - a.ms)
  const total = rows.reduce((sum, row) => sum + row.ms, 0)
  console.log('| group | share | ms per flow |\n|---|---|---|')
  for (const row of rows)
    console.log(
      `| ${row.group} | ${((100 * row.ms) / total).toFixed(1)} % | ${(row.ms / flows).toFixed(2)} |`,
    )
  console.log(`| all | 100 % | ${(total / flows).toFixed(2)} |`)
}
