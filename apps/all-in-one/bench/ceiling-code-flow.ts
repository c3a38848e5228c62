/**
 * The ceiling of the authorization code flow (PAR + PKCE + DPoP): the work it cannot avoid, in
 * this process, with the libraries the service uses and raw prepared SQL. Offer insert and fetch,
 * PAR (one insert that looks the offer up by issuer_state), authorization (one update that hands
 * out the code), code redemption with PKCE, the c_nonce, three DPoP verifications (PAR, token,
 * credential; each a signature, a server-nonce HMAC and a jti insert), the DPoP-bound access
 * token, the key proof and the SD-JWT VC. 11 SQL statements (the c_nonce is stateless).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { codeHash, issueSdJwtVc, signJws } from '@credential-service/crypto'
import {
  calculateJwkThumbprint,
  EmbeddedJWK,
  exportJWK,
  generateKeyPair,
  type JWK,
  jwtVerify,
  SignJWT,
} from 'jose'
import { cNonceMac, type Setup, type Sql, spendProof } from './ceiling-setup'

const issuerUrl = 'https://bench.example/issuers/ceiling'
const REDIRECT = 'https://wallet.example/cb'
const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url')

/** What the wallet prepares before the clock starts. */
export interface CodeFlowWallet {
  verifier: string
  challenge: string
  /** DPoP proofs for PAR and token. */
  par: string
  token: string
  proof: { jwt: string; nonce: string }
  /** The credential request's DPoP proof needs the access token (`ath`): signed in the flow. */
  credentialDpop(accessToken: string): Promise<string>
}

/** A stateless server nonce as the issuer makes it: an HMAC over tenant and time window. */
function serverNonce(key: Buffer, tenant: string, window: number): string {
  const mac = createHmac('sha256', key).update(`${tenant}|${window}`).digest().subarray(0, 18)
  return `${window.toString(36)}.${mac.toString('base64url')}`
}

export async function codeFlowWallets(tenant: string, nonceKey: Buffer) {
  const dpopKey = await generateKeyPair('ES256')
  const dpopJwk = await exportJWK(dpopKey.publicKey)
  const holder = await generateKeyPair('ES256')
  const holderJwk = await exportJWK(holder.publicKey)
  const nonce = serverNonce(nonceKey, tenant, Math.floor(Date.now() / 120_000))
  const dpop = (htu: string, ath?: string) =>
    new SignJWT({
      htm: 'POST',
      htu,
      jti: randomBytes(12).toString('base64url'),
      nonce,
      ...(ath ? { ath } : {}),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: dpopJwk })
      .setIssuedAt()
      .sign(dpopKey.privateKey)
  return async (count: number): Promise<CodeFlowWallet[]> =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const verifier = randomBytes(32).toString('base64url')
        const cNonce = randomBytes(24).toString('base64url')
        return {
          verifier,
          challenge: sha256(verifier),
          par: await dpop(`${issuerUrl}/par`),
          token: await dpop(`${issuerUrl}/token`),
          proof: {
            nonce: cNonce,
            jwt: await new SignJWT({ nonce: cNonce })
              .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: holderJwk })
              .setAudience(issuerUrl)
              .setIssuedAt()
              .sign(holder.privateKey),
          },
          credentialDpop: (accessToken: string) => dpop(`${issuerUrl}/credential`, sha256(accessToken)),
        }
      }),
    )
}

const cpuMs = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

/** RFC 9449 §4.3 as the service checks it; answers the key's thumbprint. */
async function verifyDpop(
  sql: Sql,
  s: Setup & { nonceKey: Buffer },
  proof: string,
  htu: string,
  accessToken?: string,
): Promise<string> {
  const { payload, protectedHeader } = await jwtVerify(proof, EmbeddedJWK, {
    typ: 'dpop+jwt',
    algorithms: ['ES256'],
  })
  if (payload.htm !== 'POST' || payload.htu !== htu) throw new Error('ceiling: htm/htu')
  if (accessToken && payload.ath !== sha256(accessToken)) throw new Error('ceiling: ath')
  // Valid in the current and the previous window, as the service accepts it.
  const window = Math.floor(Date.now() / 120_000)
  if (
    payload.nonce !== serverNonce(s.nonceKey, s.tenant, window) &&
    payload.nonce !== serverNonce(s.nonceKey, s.tenant, window - 1)
  )
    throw new Error('ceiling: nonce')
  const jkt = await calculateJwkThumbprint(protectedHeader.jwk as JWK)
  const used = await sql.run(
    `insert into used_jtis (tenant_id, value, expires_at) values ($1, $2, $3)
     on conflict do nothing returning value`,
    [s.tenant, `dpop:${jkt}:${payload.jti}`, new Date(Date.now() + 120_000)],
  )
  if (used.length !== 1) throw new Error('ceiling: jti replayed')
  return jkt
}

/** One flow; returns the CPU the wallet spent inside it (the credential DPoP proof). */
export async function codeFlow(
  sql: Sql,
  s: Setup & { nonceKey: Buffer },
  wallet: CodeFlowWallet,
): Promise<number> {
  const now = new Date()
  // Offer (by reference, authorization_code grant).
  await s.verifyManagementToken(s.managementToken)
  const sessionId = `ses_${randomBytes(12).toString('hex')}`
  const issuerState = randomBytes(32).toString('base64url')
  await sql.run(
    `insert into issuance_sessions (tenant_id, id, status, credential_configuration_ids, claims_encrypted,
       pre_authorized_code_hash, issuer_state_hash, by_reference, offer_code_encrypted, created_by_client_id, expires_at)
     values ($1, $2, 'offered', $3, $4, $5, $6, true, $7, 'bench', $8)`,
    [
      s.tenant,
      sessionId,
      ['pid'],
      s.sessionData.sealClaims(s.tenant, sessionId, { pid: { given_name: 'Erika', age_over_18: true } }),
      codeHash(randomBytes(32).toString('base64url')),
      codeHash(issuerState),
      s.cipher.encrypt({ code: null, issuerState }, `offer:${s.tenant}/${sessionId}`),
      new Date(now.getTime() + 300_000),
    ],
  )
  const [offered] = await sql.run(
    `update issuance_sessions set offer_fetched_at = now()
     where tenant_id = $1 and id = $2 and status = 'offered' and expires_at > now() returning offer_code_encrypted`,
    [s.tenant, sessionId],
  )
  const fetched = s.cipher.decrypt<{ issuerState: string }>(
    String(offered?.offer_code_encrypted),
    `offer:${s.tenant}/${sessionId}`,
  )
  // PAR: the offer looked up by issuer_state inside the insert.
  const jkt = await verifyDpop(sql, s, wallet.par, `${issuerUrl}/par`)
  const requestUri = randomBytes(32).toString('base64url')
  const pushed = await sql.run(
    `insert into authorization_requests (tenant_id, id, status, request_uri_hash, client_id, redirect_uri,
       code_challenge, state, credential_configuration_ids, detail_configuration_ids, session_id, dpop_jkt, expires_at)
     select $1, $2, 'pushed', $3, 'wallet', $4, $5, 'st', credential_configuration_ids, '{}', id, $6, $7
     from issuance_sessions
     where tenant_id = $1 and issuer_state_hash = $8 and status = 'offered' and expires_at > now()
     returning id`,
    [
      s.tenant,
      `par_${randomBytes(12).toString('hex')}`,
      codeHash(requestUri),
      REDIRECT,
      wallet.challenge,
      jkt,
      new Date(now.getTime() + 60_000),
      codeHash(fetched.issuerState),
    ],
  )
  if (pushed.length !== 1) throw new Error('ceiling: offer not found by issuer_state')
  // Authorization: the request_uri spent and the code handed out in one step.
  const code = randomBytes(32).toString('base64url')
  const [authorized] = await sql.run(
    `update authorization_requests set status = 'code_issued', code_hash = $4, expires_at = $5
     where tenant_id = $1 and request_uri_hash = $2 and client_id = $3 and status = 'pushed' and expires_at > now()
     returning redirect_uri, state`,
    [s.tenant, codeHash(requestUri), 'wallet', codeHash(code), new Date(now.getTime() + 60_000)],
  )
  const redirect = new URL(String(authorized?.redirect_uri))
  redirect.searchParams.set('code', code)
  redirect.searchParams.set('state', String(authorized?.state))
  redirect.searchParams.set('iss', issuerUrl)
  // Token: DPoP, code redemption, PKCE, the offer's session, the DPoP-bound access token.
  const tokenJkt = await verifyDpop(sql, s, wallet.token, `${issuerUrl}/token`)
  const [grant] = await sql.run(
    `update authorization_requests set status = 'redeemed'
     where tenant_id = $1 and code_hash = $2 and status = 'code_issued' and expires_at > now()
     returning client_id, redirect_uri, code_challenge, dpop_jkt, session_id`,
    [s.tenant, codeHash(redirect.searchParams.get('code') as string)],
  )
  const challenge = Buffer.from(sha256(wallet.verifier))
  if (
    grant?.client_id !== 'wallet' ||
    grant.redirect_uri !== REDIRECT ||
    !timingSafeEqual(challenge, Buffer.from(String(grant.code_challenge))) ||
    grant.dpop_jkt !== tokenJkt
  )
    throw new Error('ceiling: code binding')
  const redeemed = await sql.run(
    `update issuance_sessions set status = 'token_issued', token_issued_at = now()
     where tenant_id = $1 and id = $2 and status = 'offered' and expires_at > now() returning id`,
    [s.tenant, grant.session_id],
  )
  if (redeemed.length !== 1) throw new Error('ceiling: session not redeemed')
  const seconds = Math.floor(now.getTime() / 1000)
  const accessToken = await signJws(
    s.signer,
    { typ: 'at+jwt', kid: s.signer.kid },
    {
      iss: issuerUrl,
      aud: issuerUrl,
      sub: sessionId,
      iat: seconds,
      exp: seconds + 300,
      cnf: { jkt: tokenJkt },
    },
  )
  // Nonce: stateless, no statement.
  cNonceMac(s, wallet.proof.nonce)
  // Credential: the wallet signs its DPoP proof over the token (not counted).
  const walletStarted = cpuMs()
  const credentialDpop = await wallet.credentialDpop(accessToken)
  const walletCpu = cpuMs() - walletStarted
  const { payload: token } = await jwtVerify(accessToken, s.issuerKeySet, {
    issuer: issuerUrl,
    audience: issuerUrl,
    typ: 'at+jwt',
  })
  const boundTo = await verifyDpop(sql, s, credentialDpop, `${issuerUrl}/credential`, accessToken)
  if ((token.cnf as { jkt?: string }).jkt !== boundTo) throw new Error('ceiling: token not bound to the key')
  const { holderJwk, sealed } = await spendProof(sql, s, wallet.proof.jwt, issuerUrl, sessionId)
  const claims = sealed.pid as Record<string, unknown>
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
  })
  return walletCpu
}
