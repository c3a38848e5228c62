/**
 * The ceiling's database and tenant, shared by ceiling.ts and ceiling-code-flow.ts: in a module
 * of its own so that the two flow modules do not import each other.
 */
import { createHmac, randomBytes } from 'node:crypto'
import {
  createCertificate,
  createJwkCipher,
  createSessionDataCipher,
  createSignerFactory,
  deriveManagementSigningKey,
  generateKeyPair,
  type Signer,
  x5cEntry,
} from '@credential-service/crypto'
import { migrationsFolder } from '@credential-service/db-schema/client'
import { registerManagementTokens } from '@credential-service/server-kit'
import { PGlite } from '@electric-sql/pglite'
import { drizzle } from 'drizzle-orm/pglite'
import { migrate } from 'drizzle-orm/pglite/migrator'
import Fastify from 'fastify'
import { createLocalJWKSet, importJWK, type JWK, jwtVerify } from 'jose'
import postgres from 'postgres'

export interface Sql {
  run(text: string, params: unknown[]): Promise<Record<string, unknown>[]>
  close(): Promise<void>
}

/** Raw prepared statements: postgres.js on PostgreSQL, PGlite in memory otherwise. */
export async function openSql(url: string | undefined): Promise<Sql> {
  if (url) {
    const client = postgres(url, { max: 1, onnotice: () => {} })
    return {
      run: async (text, params) => [...(await client.unsafe(text, params as never[], { prepare: true }))],
      close: () => client.end(),
    }
  }
  const pg = await PGlite.create('memory://')
  await migrate(drizzle(pg), { migrationsFolder: migrationsFolder() })
  return {
    run: async (text, params) => (await pg.query<Record<string, unknown>>(text, params)).rows,
    close: () => pg.close(),
  }
}

export async function setUp(sql: Sql) {
  const tenant = `ceiling-${randomBytes(4).toString('hex')}`
  const [created] = await sql.run('insert into tenants (id, name) values ($1, $2) returning generation', [
    tenant,
    tenant,
  ])
  const masterSecret = randomBytes(32).toString('base64url')
  const cipher = createJwkCipher(masterSecret)
  const sessionData = createSessionDataCipher(masterSecret)
  const managementKey = await deriveManagementSigningKey(masterSecret)
  const api = 'https://bench.example/api'
  const managementTokens = await registerManagementTokens(Fastify(), {
    key: managementKey,
    issuer: api,
    lifetimeSeconds: 3600,
  })
  const managementToken = (
    await managementTokens.issue({
      clientId: 'bench',
      tenantId: tenant,
      tenantGeneration: created?.generation as string,
      roles: ['issuance:offer', 'presentation:request'],
    })
  ).accessToken
  const verifyManagementToken = managementTokens.verify

  const keys = await generateKeyPair('ES256')
  const certificate = await createCertificate({
    subjectPublicJwk: keys.publicJwk,
    subject: 'CN=Ceiling,C=DE',
    issuerPrivateJwk: keys.privateJwk,
    validityDays: 30,
    dnsNames: ['bench.example'],
  })
  const x5c = [x5cEntry(certificate)]
  const signer: Signer = createSignerFactory({ cipher, providers: {} })(
    {
      tenantId: tenant,
      keyChainId: 'keys',
      kmsProvider: 'db',
      externalKeyId: null,
      alg: 'ES256',
      kid: 'kid-1',
      encryptedJwk: cipher.encrypt(keys.privateJwk, `key-chain:${tenant}/keys`),
      x5c,
    },
    keys.publicJwk,
  )
  // A key chain row and one Token Status List for the status-list issuance's ceiling.
  await sql.run(
    `insert into key_chains (tenant_id, id, algorithm, certificate_mode, subject, active_jwk, active_kid, active_public_jwk)
     values ($1, 'keys', 'ES256', 'self-signed', 'CN=Ceiling,C=DE', $2, 'kid-1', $3)`,
    [tenant, cipher.encrypt(keys.privateJwk, `key-chain:${tenant}/keys`), keys.publicJwk],
  )
  await sql.run(
    `insert into status_lists (tenant_id, id, key_chain_id, seq, bits, size, capacity)
     values ($1, 'stl_ceiling', 'keys', 1, 1, $2, $3)`,
    [tenant, 2 ** 20, 2 ** 19],
  )
  const issuerKeySet = createLocalJWKSet({ keys: [{ ...keys.publicJwk, kid: 'kid-1', alg: 'ES256' }] })
  return {
    tenant,
    cipher,
    sessionData,
    managementToken,
    verifyManagementToken,
    signer,
    issuerKeySet,
    certificate,
  }
}

export type Setup = Awaited<ReturnType<typeof setUp>>

const cNonceKey = randomBytes(32)

/**
 * The work of a stateless c_nonce, made at the nonce request and checked at the credential request:
 * one HMAC-SHA256 over tenant and nonce (the bench's wallets sign their proofs ahead, over a random
 * nonce, so the value itself is theirs).
 */
export const cNonceMac = (s: { tenant: string }, nonce: string) =>
  createHmac('sha256', cNonceKey).update(`${s.tenant}|${nonce}`).digest()

/**
 * The credential request's unavoidable part every issuance ceiling shares: the key proof verified,
 * its c_nonce checked and spent, the session completed (2 statements); the holder key and the session's claims.
 */
export async function spendProof(
  sql: Sql,
  s: Setup,
  proofJwt: string,
  audience: string,
  sessionId: string,
): Promise<{ holderJwk: JWK; sealed: Record<string, unknown> }> {
  const [encodedHeader] = proofJwt.split('.')
  const { jwk } = JSON.parse(Buffer.from(encodedHeader as string, 'base64url').toString()) as { jwk: JWK }
  const { payload } = await jwtVerify(proofJwt, await importJWK(jwk, 'ES256'), {
    audience,
    typ: 'openid4vci-proof+jwt',
  })
  // A stateless c_nonce: its MAC checked, then recorded as spent (a second record conflicts).
  cNonceMac(s, String(payload.nonce))
  const consumed = await sql.run(
    'insert into nonces (tenant_id, value, expires_at) values ($1, $2, $3) on conflict do nothing returning value',
    [s.tenant, payload.nonce, new Date(Date.now() + 300_000)],
  )
  if (consumed.length !== 1) throw new Error('ceiling: nonce not consumed')
  const [session] = await sql.run(
    `update issuance_sessions set status = 'completed', credential_issued_at = now()
     where tenant_id = $1 and id = $2 and status = 'token_issued' returning claims_encrypted`,
    [s.tenant, sessionId],
  )
  if (!session) throw new Error('ceiling: session not found')
  return {
    holderJwk: jwk,
    sealed: s.sessionData.openClaims(s.tenant, sessionId, String(session.claims_encrypted)),
  }
}
