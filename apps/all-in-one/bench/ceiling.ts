/**
 * The ceiling of one flow (issue 7): only the work a flow cannot avoid — token and proof
 * verification, credential and request signing, response decryption and credential verification,
 * and the fewest SQL statements that keep every step single-use — in a tight loop in this process,
 * with the libraries the service uses and raw prepared SQL. No HTTP, no validation, no logging.
 * The service's own CPU per flow is reported as a multiple of this. The authorization code flow's
 * ceiling is in ceiling-code-flow.ts, the database and tenant both use in ceiling-setup.ts.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  codeHash,
  issueMdoc,
  issueSdJwtVc,
  parseCertificate,
  signJws,
  signStatusListToken,
  verifySdJwtPresentation,
} from '@credential-service/crypto'
import { createStatusLists, presentationTrust, type StatusCheck } from '@credential-service/server-kit'
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import {
  CompactEncrypt,
  compactDecrypt,
  exportJWK,
  generateKeyPair as holderKeyPair,
  importJWK,
  type JWK,
  jwtVerify,
  SignJWT,
} from 'jose'
import { kbSigner } from '../test/wallet'
import { codeFlow, codeFlowWallets } from './ceiling-code-flow'
import { interactiveFlow, interactiveWallet } from './ceiling-interactive'
import { cNonceMac, openSql, type Setup, type Sql, setUp, spendProof } from './ceiling-setup'

export interface CeilingResult {
  flow: string
  cpuMsPerFlow: number
  sqlStatements: number
}

const cpuMs = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

const issuerUrl = 'https://bench.example/issuers/ceiling'
// The ceiling's credentials carry no status entry: the cache is never read.
const statusLists = createStatusLists({ maxSeconds: 0, maxEntries: 1, maxBytes: 1024 })

/**
 * One Token Status List entry at a random index: the place reserved on the key chain's oldest list
 * with room and the index claimed in one statement, as the service does.
 */
async function allocateStatus(sql: Sql, s: Setup, sessionId: string): Promise<{ idx: number; uri: string }> {
  // A random index already taken (the birthday bound: likely once in a run of a few thousand) is
  // drawn again, as the service does.
  for (let attempt = 0; attempt < 5; attempt++) {
    const claimed = await claimStatus(sql, s, sessionId)
    if (claimed) return claimed
  }
  throw new Error('ceiling: no status list entry')
}

async function claimStatus(sql: Sql, s: Setup, sessionId: string) {
  const [row] = await sql.run(
    `with list as (
       update status_lists set allocated = allocated + 1
       where tenant_id = $1 and id = (select id from status_lists where tenant_id = $1 and key_chain_id = 'keys'
         and allocated + 1 <= capacity order by seq limit 1) and allocated + 1 <= capacity
       returning id, size
     ), claimed as (
       insert into status_list_entries (tenant_id, list_id, idx, session_id, credential_configuration_id)
       select $1, list.id, floor($2::float8 * list.size)::int, $3, 'pid' from list
       on conflict do nothing returning list_id, idx
     )
     select list_id, idx from claimed`,
    [s.tenant, randomBytes(6).readUIntBE(0, 6) / 2 ** 48, sessionId],
  )
  return row ? { idx: Number(row.idx), uri: `${issuerUrl}/status-lists/${row.list_id}` } : undefined
}

type CeilingIssuance = 'sd-jwt' | 'mdoc' | 'sd-jwt with status'

/** A signed Token Status List (every entry VALID) at a loopback URI, as an issuer serves it. */
async function serveStatusList(s: Setup): Promise<{ uri: string; close: () => Promise<void> }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/statuslist+jwt' }).end(token)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/status-lists/ceiling`
  const token = await signStatusListToken({
    signer: s.signer,
    uri,
    bits: 1,
    size: 1024,
    entries: [],
    issuedAt: new Date(),
    expiresAt: new Date(Date.now() + 86_400_000),
    ttlSeconds: 300,
  })
  return { uri, close: () => new Promise((resolve) => server.close(() => resolve())) }
}

async function issuanceFlow(
  sql: Sql,
  s: Setup,
  format: CeilingIssuance,
  proof: { jwt: string; nonce: string },
) {
  const now = new Date()
  await s.verifyManagementToken(s.managementToken)
  const sessionId = `ses_${randomBytes(12).toString('hex')}`
  const code = randomBytes(32).toString('base64url')
  await sql.run(
    `insert into issuance_sessions (tenant_id, id, status, credential_configuration_ids, claims_encrypted,
       pre_authorized_code_hash, by_reference, offer_code_encrypted, created_by_client_id, expires_at)
     values ($1, $2, 'offered', $3, $4, $5, true, $6, 'bench', $7)`,
    [
      s.tenant,
      sessionId,
      ['pid'],
      s.sessionData.sealClaims(s.tenant, sessionId, { pid: { given_name: 'Erika', age_over_18: true } }),
      codeHash(code),
      s.cipher.encrypt(code, `offer:${s.tenant}/${sessionId}`),
      new Date(now.getTime() + 300_000),
    ],
  )
  // Offer by reference.
  const [offered] = await sql.run(
    `update issuance_sessions set offer_fetched_at = now()
     where tenant_id = $1 and id = $2 and status = 'offered' and expires_at > now() returning offer_code_encrypted`,
    [s.tenant, sessionId],
  )
  s.cipher.decrypt<string>(String(offered?.offer_code_encrypted), `offer:${s.tenant}/${sessionId}`)
  // Token.
  const [redeemed] = await sql.run(
    `update issuance_sessions set status = 'token_issued', token_issued_at = now()
     where tenant_id = $1 and pre_authorized_code_hash = $2 and status = 'offered' and expires_at > now()
     returning id, credential_configuration_ids`,
    [s.tenant, codeHash(code)],
  )
  const seconds = Math.floor(now.getTime() / 1000)
  const accessToken = await signJws(
    s.signer,
    { typ: 'at+jwt', kid: s.signer.kid },
    { iss: issuerUrl, aud: issuerUrl, sub: redeemed?.id, iat: seconds, exp: seconds + 300 },
  )
  // Nonce: stateless, no statement.
  cNonceMac(s, proof.nonce)
  // Credential.
  await jwtVerify(accessToken, s.issuerKeySet, { issuer: issuerUrl, audience: issuerUrl, typ: 'at+jwt' })
  const { holderJwk, sealed } = await spendProof(sql, s, proof.jwt, issuerUrl, sessionId)
  const claims = sealed.pid as Record<string, unknown>
  if (format === 'mdoc') {
    await issueMdoc({
      signer: s.signer,
      docType: 'org.iso.18013.5.1.mDL',
      namespaces: { 'org.iso.18013.5.1': claims },
      deviceJwk: holderJwk,
      signedAt: now,
      validFrom: now,
      validUntil: new Date(now.getTime() + 86_400_000),
    })
  } else {
    await issueSdJwtVc({
      signer: s.signer,
      issuer: issuerUrl,
      vct: 'urn:bench:pid',
      issuedAt: now,
      expiresAt: new Date(now.getTime() + 86_400_000),
      holderJwk,
      claims,
      disclosable: [['given_name'], ['age_over_18']],
      decoys: 2,
      status: format === 'sd-jwt with status' ? await allocateStatus(sql, s, sessionId) : undefined,
    })
  }
}

type Wallet = (request: { nonce: string; state: string; jwk: JWK }) => Promise<string>
/** Where status lists come from: none (a credential without status), or a cached list over HTTP. */
type StatusSource = Pick<StatusCheck, 'outbound' | 'statusLists'>
const NO_STATUS: StatusSource = {
  outbound: { allowHttp: false, allowedHosts: [], maxResponseBytes: 256 * 1024 },
  statusLists,
}

/** Returns the CPU the wallet side spent, so the caller can leave it out. */
async function presentationFlow(sql: Sql, s: Setup, wallet: Wallet, status = NO_STATUS): Promise<number> {
  const now = new Date()
  await s.verifyManagementToken(s.managementToken)
  const id = `ses_${randomBytes(12).toString('hex')}`
  const requestId = randomBytes(24).toString('base64url')
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const context = `presentation:${s.tenant}/${id}`
  await sql.run(
    `insert into presentation_sessions (tenant_id, id, request_id, status, presentation_config_id, client_id,
       nonce, state, response_mode, encryption_key, encryption_kid, created_by_client_id, expires_at)
     values ($1, $2, $3, 'pending', 'age', 'x509_san_dns:bench.example', $4, $5, 'direct_post.jwt', $6, 'enc', 'bench', $7)`,
    [
      s.tenant,
      id,
      requestId,
      randomBytes(32).toString('base64url'),
      randomBytes(32).toString('base64url'),
      s.cipher.encrypt(privateKey.export({ format: 'jwk' }) as JWK, context),
      new Date(now.getTime() + 300_000),
    ],
  )
  // Request object.
  const [row] = await sql.run(
    `update presentation_sessions set request_fetched_at = now()
     where tenant_id = $1 and request_id = $2 and status = 'pending' and expires_at > now()
     returning nonce, state, encryption_key`,
    [s.tenant, requestId],
  )
  const { d: _d, ...publicJwk } = s.cipher.decrypt<JWK>(String(row?.encryption_key), context)
  await signJws(
    s.signer,
    { typ: 'oauth-authz-req+jwt', kid: s.signer.kid, x5c: s.signer.x5c },
    {
      client_id: 'x509_san_dns:bench.example',
      nonce: row?.nonce,
      state: row?.state,
      client_metadata: { jwks: { keys: [publicJwk] } },
    },
  )
  const walletStarted = cpuMs()
  const response = await wallet({ nonce: String(row?.nonce), state: String(row?.state), jwk: publicJwk })
  const walletCpu = cpuMs() - walletStarted
  // Response.
  const [pending] = await sql.run(
    'select nonce, state, encryption_key from presentation_sessions where tenant_id = $1 and request_id = $2',
    [s.tenant, requestId],
  )
  const privateJwk = s.cipher.decrypt<JWK>(String(pending?.encryption_key), context)
  const { plaintext } = await compactDecrypt(
    response,
    await importJWK({ ...privateJwk, alg: 'ECDH-ES' }, 'ECDH-ES'),
  )
  const form = JSON.parse(new TextDecoder().decode(plaintext)) as {
    vp_token: { pid: string[] }
    state: string
  }
  if (form.state !== pending?.state) throw new Error('ceiling: state mismatch')
  const claims = await verifySdJwtPresentation({
    presentation: form.vp_token.pid[0] as string,
    vctValues: ['urn:bench:pid'],
    nonce: String(pending?.nonce),
    audiences: ['x509_san_dns:bench.example'],
    transactionData: null,
    requireHolderBinding: true,
    ...presentationTrust({
      anchors: [parseCertificate(s.certificate)],
      acceptAnyIssuer: false,
      now,
      ...status,
    }),
  })
  const finished = await sql.run(
    `update presentation_sessions set status = 'verified', result_encrypted = $3, response_received_at = now()
     where tenant_id = $1 and id = $2 and status = 'pending' returning id`,
    [s.tenant, id, s.sessionData.sealResult(s.tenant, id, { pid: [claims] })],
  )
  if (finished.length !== 1) throw new Error('ceiling: session not finished')
  // Session read.
  await s.verifyManagementToken(s.managementToken)
  const [read] = await sql.run(
    'select status, result_encrypted from presentation_sessions where tenant_id = $1 and id = $2',
    [s.tenant, id],
  )
  s.sessionData.openResult(s.tenant, id, String(read?.result_encrypted))
  return walletCpu
}

/** The ceilings of one bench run: set up once, each flow measured when asked. */
export interface Ceilings {
  /** One round of the flow's ceiling now, `count` flows (`iterations` by default); undefined without one. */
  round(flow: string, count?: number): Promise<CeilingResult | undefined>
  close(): Promise<void>
}

interface CeilingFlow {
  sqlStatements: number
  warm(): Promise<void>
  /** CPU ms per flow over `count` flows. */
  round(count: number): Promise<number>
}

/**
 * The ceilings' database, tenant, keys and wallets, ready to measure any flow's: the bench measures
 * a round of each flow's ceiling right before and right after each of its rows, so that both see the
 * machine in the same state (this VM's speed drifts by a third over minutes, and ceilings taken at
 * the end of a run made the same code's multiples read 1.2 in one run and 2.1 in the next).
 */
export async function openCeilings(
  databaseUrl: string | undefined,
  iterations: number,
  { warmup = 20 }: { warmup?: number } = {},
): Promise<Ceilings> {
  const warmups = Math.min(20, warmup)
  const sql = await openSql(databaseUrl)
  let stopStatusServer = async () => {}
  try {
    const s = await setUp(sql)
    const holder = await holderKeyPair('ES256', { extractable: true })
    const holderJwk = await exportJWK(holder.publicKey)
    // Wallet work is prepared before the clock starts (proofs) or subtracted (presentations).
    const proofs = async (count: number) =>
      Promise.all(
        Array.from({ length: count }, async () => {
          const nonce = randomBytes(24).toString('base64url')
          const jwt = await new SignJWT({ nonce })
            .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: holderJwk })
            .setAudience(issuerUrl)
            .setIssuedAt()
            .sign(holder.privateKey)
          return { jwt, nonce }
        }),
      )
    // The presented credentials: a day valid, bound to the holder key, optionally with a status entry.
    const presentable = (status?: { idx: number; uri: string }) =>
      issueSdJwtVc({
        signer: s.signer,
        issuer: issuerUrl,
        vct: 'urn:bench:pid',
        issuedAt: new Date(),
        expiresAt: new Date(Date.now() + 86_400_000),
        holderJwk,
        claims: { given_name: 'Erika', age_over_18: true },
        disclosable: [['given_name'], ['age_over_18']],
        status,
      })
    const presenter = new SDJwtVcInstance({
      hasher: digest,
      saltGenerator: generateSalt,
      kbSignAlg: 'ES256',
      kbSigner: kbSigner(holder.privateKey),
    })
    const walletOf =
      (presented: string): Wallet =>
      async (request) => {
        const vp = await presenter.present(
          presented,
          { age_over_18: true },
          {
            kb: {
              payload: {
                iat: Math.floor(Date.now() / 1000),
                nonce: request.nonce,
                aud: 'x509_san_dns:bench.example',
              },
            },
          },
        )
        return new CompactEncrypt(
          new TextEncoder().encode(JSON.stringify({ vp_token: { pid: [vp] }, state: request.state })),
        )
          .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128GCM', kid: 'enc' })
          .encrypt(await importJWK(request.jwk, 'ECDH-ES'))
      }
    const wallet = walletOf(await presentable())
    // Issue 44 item 5: a credential with a status entry, its list served over loopback and held in
    // the process's cache after the first fetch, as the verifier's is (TTL 300 s).
    const statusServer = await serveStatusList(s)
    stopStatusServer = statusServer.close
    const statusWallet = walletOf(await presentable({ idx: 7, uri: statusServer.uri }))
    const cachedStatus: StatusSource = {
      outbound: { allowHttp: true, allowedHosts: ['127.0.0.1'], maxResponseBytes: 256 * 1024 },
      statusLists: createStatusLists({ maxSeconds: 300, maxEntries: 10, maxBytes: 1024 * 1024 }),
    }

    /** A wallet's flow: `prepare` makes its wallets before the clock starts; `run` returns the wallet's own CPU, subtracted. */
    const walletFlow = <W>(
      sqlStatements: number,
      prepare: (count: number) => Promise<W[]>,
      run: (prepared: W) => Promise<number>,
    ): CeilingFlow => ({
      sqlStatements,
      async warm() {
        for (const prepared of await prepare(warmups)) await run(prepared)
      },
      async round(count) {
        const timed = await prepare(count)
        let walletCpu = 0
        const started = cpuMs()
        for (const prepared of timed) walletCpu += await run(prepared)
        return (cpuMs() - started - walletCpu) / count
      },
    })
    /** Each flow's ceiling, made on first use (some need set-up of their own). */
    const makers = new Map<string, () => Promise<CeilingFlow>>()
    const issuances: [CeilingIssuance, string, number][] = [
      // The c_nonce is stateless (issue 44): no statement at the nonce request.
      ['sd-jwt', 'issuance (SD-JWT VC)', 5],
      ['mdoc', 'issuance (mdoc)', 5],
      // Issue 44 item 5: one statement more, the status list entry.
      ['sd-jwt with status', 'issuance with status list (SD-JWT VC)', 6],
    ]
    for (const [format, flow, sqlStatements] of issuances)
      makers.set(flow, async () =>
        walletFlow(sqlStatements, proofs, async (proof) => {
          await issuanceFlow(sql, s, format, proof)
          return 0
        }),
      )
    makers.set('issuance, authorization code (PAR + PKCE + DPoP)', async () => {
      const nonceKey = randomBytes(32)
      const code = { ...s, nonceKey }
      return walletFlow(11, await codeFlowWallets(s.tenant, nonceKey), (prepared) =>
        codeFlow(sql, code, prepared),
      )
    })
    const presentations: [string, Wallet, StatusSource][] = [
      ['presentation (direct_post.jwt)', wallet, NO_STATUS],
      ['presentation with status list (direct_post.jwt)', statusWallet, cachedStatus],
    ]
    for (const [flow, presenting, status] of presentations)
      makers.set(flow, async () =>
        walletFlow(
          5,
          async (count) => Array.from({ length: count }),
          () => presentationFlow(sql, s, presenting, status),
        ),
      )
    // Issue 44 item 5: Interactive Authorization, the PID presented inline, an mdoc issued.
    makers.set('issuance, interactive authorization (PID presented → mdoc)', async () => {
      const iaTrust = presentationTrust({
        anchors: [parseCertificate(s.certificate)],
        acceptAnyIssuer: false,
        now: new Date(),
        ...NO_STATUS,
      })
      const pid = await presentable()
      const presentPid = (nonce: string) =>
        presenter.present(
          pid,
          { given_name: true },
          { kb: { payload: { iat: Math.floor(Date.now() / 1000), nonce, aud: 'ia:https://bench.example' } } },
        )
      const iaWallets = async (count: number) =>
        (await proofs(count)).map((proof) => interactiveWallet(presentPid, proof))
      return walletFlow(6, iaWallets, (prepared) => interactiveFlow(sql, s, iaTrust, prepared))
    })
    const ready = new Map<string, Promise<CeilingFlow>>()
    const flowOf = (name: string) => {
      const make = makers.get(name)
      if (!make) return undefined
      let made = ready.get(name)
      if (!made) {
        made = make().then(async (flow) => {
          await flow.warm()
          return flow
        })
        ready.set(name, made)
      }
      return made
    }
    const close = async () => {
      await stopStatusServer()
      await sql.close()
    }
    return {
      async round(name, count = iterations) {
        const flow = await flowOf(name)
        return (
          flow && { flow: name, cpuMsPerFlow: await flow.round(count), sqlStatements: flow.sqlStatements }
        )
      },
      close,
    }
  } catch (error) {
    await stopStatusServer()
    await sql.close()
    throw error
  }
}
