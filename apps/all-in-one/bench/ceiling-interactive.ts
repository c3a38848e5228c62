/**
 * The ceiling of the Interactive Authorization flow (issue 44 item 5; the bench's "PID presented →
 * mdoc"): the work it cannot avoid, in this process, with the libraries the service uses and raw
 * prepared SQL. The Initial Request (the pushed request and its presentation session in one
 * insert) and its signed OpenID4VP request; the follow-up (one read of the request by auth_session
 * with its presentation's nonce, the PID's verification, then one statement that marks the
 * presentation verified, creates the issuance session with the presented claims and hands out the
 * code); the token (code redemption with PKCE and the session, one statement); the c_nonce; the
 * credential (nonce spent, session completed, the mdoc). 6 SQL statements (the c_nonce is stateless).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import {
  codeHash,
  issueMdoc,
  type PresentationTrust,
  signJws,
  verifySdJwtPresentation,
} from '@credential-service/crypto'
import { jwtVerify } from 'jose'
import { cNonceMac, type Setup, type Sql, spendProof } from './ceiling-setup'

const issuerUrl = 'https://bench.example/issuers/ceiling'
const origin = 'https://bench.example'
const NS = 'org.iso.18013.5.1'
const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url')
const cpuMs = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

/** What the wallet prepares before the clock starts, and how it presents the PID (timed apart). */
export interface InteractiveWallet {
  verifier: string
  challenge: string
  proof: { jwt: string; nonce: string }
  /** The PID with a KB-JWT over this nonce and `aud` = `ia:` + the issuer's origin. */
  present(nonce: string): Promise<string>
}

export const interactiveWallet = (
  present: (nonce: string) => Promise<string>,
  proof: { jwt: string; nonce: string },
): InteractiveWallet => {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: sha256(verifier), proof, present }
}

/** One flow; returns the CPU the wallet spent inside it (the PID presentation). */
export async function interactiveFlow(
  sql: Sql,
  s: Setup,
  trust: PresentationTrust,
  wallet: InteractiveWallet,
): Promise<number> {
  const now = new Date()
  const expiresAt = new Date(now.getTime() + 300_000)
  // Initial Request: the pushed request with its presentation session, in one statement.
  const requestId = `par_${randomBytes(12).toString('hex')}`
  const presentationId = `ses_${randomBytes(12).toString('hex')}`
  const nonce = randomBytes(32).toString('base64url')
  const authSession = randomBytes(32).toString('base64url')
  await sql.run(
    `with presentation as (
       insert into presentation_sessions (tenant_id, id, request_id, status, presentation_config_id, client_id,
         nonce, state, response_mode, encryption_key, encryption_kid, created_by_client_id, expires_at)
       values ($1, $2, $3, 'pending', 'pid-login', 'x509_san_dns:bench.example', $4, '', 'ia_post', '', '', 'issuer', $5)
       returning id)
     insert into authorization_requests (tenant_id, id, status, request_uri_hash, client_id, redirect_uri,
       code_challenge, credential_configuration_ids, detail_configuration_ids, presentation_session_id,
       auth_session_hash, interaction_type, expires_at)
     select $1, $6, 'pushed', $7, 'wallet', '', $8, '{mdl-ia}', '{}', presentation.id, $9, 'openid4vp_presentation', $5
     from presentation`,
    [
      s.tenant,
      presentationId,
      randomBytes(24).toString('base64url'),
      nonce,
      expiresAt,
      requestId,
      codeHash(randomBytes(32).toString('base64url')),
      wallet.challenge,
      codeHash(authSession),
    ],
  )
  await signJws(
    s.signer,
    { typ: 'oauth-authz-req+jwt', kid: s.signer.kid, x5c: s.signer.x5c },
    {
      aud: 'https://self-issued.me/v2',
      client_id: 'x509_san_dns:bench.example',
      response_type: 'vp_token',
      response_mode: 'ia_post',
      nonce,
      expected_origins: [origin],
      dcql_query: {
        credentials: [
          {
            id: 'pid',
            format: 'dc+sd-jwt',
            meta: { vct_values: ['urn:bench:pid'] },
            claims: [{ path: ['given_name'] }],
          },
        ],
      },
    },
  )
  const walletStarted = cpuMs()
  const presented = await wallet.present(nonce)
  const walletCpu = cpuMs() - walletStarted
  // Follow-up: the request by auth_session with its presentation's nonce, in one read.
  const [pending] = await sql.run(
    `select a.id, p.nonce from authorization_requests a
       join presentation_sessions p on p.tenant_id = a.tenant_id and p.id = a.presentation_session_id
     where a.tenant_id = $1 and a.auth_session_hash = $2 and a.status = 'pushed' and a.expires_at > now()
       and p.status = 'pending'`,
    [s.tenant, codeHash(authSession)],
  )
  if (!pending) throw new Error('ceiling: no pending Interactive Authorization')
  const claims = await verifySdJwtPresentation({
    presentation: presented,
    vctValues: ['urn:bench:pid'],
    nonce: String(pending.nonce),
    audiences: [`ia:${origin}`],
    transactionData: null,
    requireHolderBinding: true,
    ...trust,
  })
  // The presentation verified, the issuance session made with the presented claim, the code out.
  const sessionId = `ses_${randomBytes(12).toString('hex')}`
  const code = randomBytes(32).toString('base64url')
  const issued = await sql.run(
    `with verified as (
       update presentation_sessions set status = 'verified', response_received_at = now()
       where tenant_id = $1 and id = $2 and status = 'pending' returning id
     ), session as (
       insert into issuance_sessions (tenant_id, id, status, credential_configuration_ids, claims_encrypted,
         pre_authorized_code_hash, created_by_client_id, expires_at)
       select $1, $3, 'offered', '{mdl-ia}', $4, $5, 'issuer', $6 from verified returning id
     )
     update authorization_requests set status = 'code_issued', code_hash = $7, session_id = session.id
     from session where tenant_id = $1 and authorization_requests.id = $8 and status = 'pushed' returning session.id`,
    [
      s.tenant,
      presentationId,
      sessionId,
      s.sessionData.sealClaims(s.tenant, sessionId, {
        'mdl-ia': { [NS]: { given_name: claims.given_name } },
      }),
      codeHash(randomBytes(32).toString('base64url')),
      expiresAt,
      codeHash(code),
      pending.id,
    ],
  )
  if (issued.length !== 1) throw new Error('ceiling: no code')
  // Token: the code redeemed with PKCE, the session's token issued, in one statement.
  const [grant] = await sql.run(
    `with grant_ as (
       update authorization_requests set status = 'redeemed'
       where tenant_id = $1 and code_hash = $2 and status = 'code_issued' and expires_at > now()
       returning client_id, code_challenge, session_id
     ), session as (
       update issuance_sessions set status = 'token_issued', token_issued_at = now()
       from grant_ where issuance_sessions.tenant_id = $1 and issuance_sessions.id = grant_.session_id
         and issuance_sessions.status = 'offered' returning issuance_sessions.id
     )
     select grant_.client_id, grant_.code_challenge, session.id as session_id from grant_ join session on true`,
    [s.tenant, codeHash(code)],
  )
  if (
    grant?.client_id !== 'wallet' ||
    !timingSafeEqual(Buffer.from(sha256(wallet.verifier)), Buffer.from(String(grant.code_challenge)))
  )
    throw new Error('ceiling: code binding')
  const seconds = Math.floor(now.getTime() / 1000)
  const accessToken = await signJws(
    s.signer,
    { typ: 'at+jwt', kid: s.signer.kid },
    { iss: issuerUrl, aud: issuerUrl, sub: grant.session_id, iat: seconds, exp: seconds + 300 },
  )
  // Nonce: stateless, no statement.
  cNonceMac(s, wallet.proof.nonce)
  // Credential.
  await jwtVerify(accessToken, s.issuerKeySet, { issuer: issuerUrl, audience: issuerUrl, typ: 'at+jwt' })
  const { holderJwk, sealed } = await spendProof(sql, s, wallet.proof.jwt, issuerUrl, sessionId)
  await issueMdoc({
    signer: s.signer,
    docType: 'org.iso.18013.5.1.mDL',
    namespaces: sealed['mdl-ia'] as Record<string, Record<string, unknown>>,
    deviceJwk: holderJwk,
    signedAt: now,
    validFrom: now,
    validUntil: new Date(now.getTime() + 86_400_000),
  })
  return walletCpu
}
