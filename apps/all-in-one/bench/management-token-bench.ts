/**
 * Issue 21 step 6: management access tokens signed and verified with jose (the hand-wired code
 * in packages/crypto/src/management-token.ts before the step) against @fastify/jwt (fast-jwt),
 * same algorithm (EdDSA, Ed25519 from MASTER_SECRET), same claims and headers, same checks
 * (alg, typ, iss, aud, exp, claim shapes). One process, no HTTP; CPU time per operation.
 *
 *   npx tsx apps/all-in-one/bench/management-token-bench.ts        (MGMT_BENCH_OPS=2000 per round)
 *
 * Rows, each the median of MGMT_BENCH_ROUNDS (default 9) interleaved rounds:
 * - sign: what POST /api/oauth2/token pays for the token (once per token);
 * - verify, first sight: a token this process has not seen (once per token and process);
 * - verify, repeat: what every further request with the same token pays — the service remembers a
 *   verified token until its exp, and @fastify/jwt's verifier has its own cache (`cache: true`).
 */
import { createPublicKey, type KeyObject } from 'node:crypto'
import { type Principal, zAccessTokenClaims } from '@credential-service/core-domain'
import { deriveManagementSigningKey } from '@credential-service/crypto'
import fastifyJwt from '@fastify/jwt'
import Fastify from 'fastify'
import { createLocalJWKSet, decodeJwt, jwtVerify, SignJWT } from 'jose'

const OPS = Number(process.env.MGMT_BENCH_OPS ?? 2000)
const ROUNDS = Number(process.env.MGMT_BENCH_ROUNDS ?? 9)
const issuer = 'https://service.example/api'
const lifetimeSeconds = 3600
const principal: Principal = {
  clientId: 'cli_bench',
  tenantId: 'acme',
  tenantGeneration: 'gen_bench',
  roles: ['issuance:offer', 'presentation:request'],
}

const key = await deriveManagementSigningKey('management-token-bench-secret-0123456789')
const kid = key.publicJwk.kid
const pem = (k: KeyObject, type: 'pkcs8' | 'spki') => k.export({ format: 'pem', type }) as string
const privatePem = pem(key.privateKey, 'pkcs8')
const publicPem = pem(createPublicKey(key.privateKey), 'spki')

// jose, as packages/crypto/src/management-token.ts did it
const keySet = createLocalJWKSet({ keys: [key.publicJwk] })
function claimsOf(p: Principal) {
  return {
    client_id: p.clientId,
    roles: [...p.roles],
    ...(p.tenantGeneration === undefined ? {} : { tenant_generation: p.tenantGeneration }),
  }
}
async function joseSign(): Promise<string> {
  const iat = Math.floor(Date.now() / 1000)
  return new SignJWT(claimsOf(principal))
    .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid })
    .setIssuer(issuer)
    .setAudience(issuer)
    .setIssuedAt(iat)
    .setExpirationTime(iat + lifetimeSeconds)
    .setJti(globalThis.crypto.randomUUID())
    .setSubject(principal.tenantId as string)
    .sign(key.privateKey)
}
async function joseVerify(token: string) {
  const { payload } = await jwtVerify(token, keySet, {
    issuer,
    audience: issuer,
    algorithms: ['EdDSA'],
    typ: 'at+jwt',
  })
  return zAccessTokenClaims.parse(payload)
}

// @fastify/jwt with the same key, claims and checks
async function fastifyJwtInstance(cache: boolean) {
  const app = Fastify()
  await app.register(fastifyJwt, {
    secret: { private: privatePem, public: publicPem },
    sign: {
      algorithm: 'EdDSA',
      header: { alg: 'EdDSA', typ: 'at+jwt' },
      kid,
      iss: issuer,
      aud: issuer,
      expiresIn: lifetimeSeconds,
    },
    verify: {
      algorithms: ['EdDSA'],
      checkTyp: 'at+jwt',
      allowedIss: issuer,
      allowedAud: issuer,
      requiredClaims: ['exp'],
      cache,
    },
  })
  await app.ready()
  return app
}
const plain = await fastifyJwtInstance(false)
const cached = await fastifyJwtInstance(true)
function fjSign(): string {
  return plain.jwt.sign({
    ...claimsOf(principal),
    sub: principal.tenantId,
    iat: Math.floor(Date.now() / 1000),
    jti: globalThis.crypto.randomUUID(),
  })
}
function fjVerify(app: typeof plain, token: string) {
  return zAccessTokenClaims.parse(app.jwt.verify(token))
}

// The service's memory of verified tokens (a Map until exp) in front of either
function remembered(verify: (token: string) => unknown) {
  const known = new Map<string, { claims: unknown; expiresAt: number }>()
  return async (token: string) => {
    const hit = known.get(token)
    if (hit && Date.now() < hit.expiresAt) return hit.claims
    const claims = await verify(token)
    known.set(token, { claims, expiresAt: Date.now() + lifetimeSeconds * 1000 })
    return claims
  }
}

// Sanity: both sides accept each other's tokens (same wire format)
const a = await joseSign()
const b = fjSign()
await joseVerify(b)
fjVerify(plain, a)
const decodeHeader = (t: string) =>
  JSON.parse(Buffer.from(t.split('.', 1)[0] as string, 'base64url').toString())
console.log('jose header', decodeHeader(a), '— @fastify/jwt header', decodeHeader(b))
const lifetime = (t: string) => {
  const { iat, exp } = decodeJwt(t)
  return (exp as number) - (iat as number)
}
if (lifetime(a) !== lifetimeSeconds || lifetime(b) !== lifetimeSeconds) throw new Error('lifetimes differ')

function cpuUs(): number {
  const { user, system } = process.cpuUsage()
  return user + system
}
async function measure(run: (i: number) => unknown | Promise<unknown>): Promise<number> {
  const start = cpuUs()
  for (let i = 0; i < OPS; i++) await run(i)
  return (cpuUs() - start) / OPS
}

const rows: Record<string, number[]> = {}
const record = (name: string, us: number) => {
  rows[name] ??= []
  rows[name].push(us)
}
for (let round = 0; round <= ROUNDS; round++) {
  const joseTokens = await Promise.all(Array.from({ length: OPS }, joseSign))
  const warm = round === 0
  const results: [string, number][] = [
    ['sign: jose', await measure(joseSign)],
    ['sign: @fastify/jwt', await measure(fjSign)],
    ['verify, first sight: jose', await measure((i) => joseVerify(joseTokens[i] as string))],
    ['verify, first sight: @fastify/jwt', await measure((i) => fjVerify(plain, joseTokens[i] as string))],
  ]
  const joseMemory = remembered(joseVerify)
  const fjMemory = remembered((t) => fjVerify(plain, t))
  const token = joseTokens[0] as string
  await joseMemory(token)
  await fjMemory(token)
  fjVerify(cached, token)
  results.push(
    ['verify, repeat: jose + remembered Map', await measure(() => joseMemory(token))],
    ['verify, repeat: @fastify/jwt + remembered Map', await measure(() => fjMemory(token))],
    ['verify, repeat: @fastify/jwt cache: true', await measure(() => fjVerify(cached, token))],
  )
  if (!warm) for (const [name, us] of results) record(name, us)
}
await Promise.all([plain.close(), cached.close()])

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y)
  return s[Math.floor(s.length / 2)] as number
}
console.log(`\n${ROUNDS} rounds × ${OPS} operations, CPU µs per operation (median; min–max)\n`)
console.log('| operation | µs/op | range |\n|---|---:|---:|')
for (const [name, xs] of Object.entries(rows)) {
  console.log(
    `| ${name} | ${median(xs).toFixed(1)} | ${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)} |`,
  )
}
