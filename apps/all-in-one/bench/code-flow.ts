/**
 * The bench's authorization code flow (OpenID4VCI 1.0 §5) over real HTTP, as a HAIP wallet drives
 * it: offer by reference with `grant: "authorization_code"` → offer → metadata → PAR (issuer_state,
 * PKCE S256, DPoP) → /authorize (no login: the offer has the claims; the redirect is read, not
 * followed) → token (code_verifier, DPoP) → nonce → credential (`Authorization: DPoP`, proof with
 * `ath`). The wallet signs with jose in this process: its CPU is not server CPU.
 */
import { createHash, randomBytes } from 'node:crypto'
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'

// biome-ignore lint/suspicious/noExplicitAny: loosely typed JSON answers
type Json = Record<string, any>

/** The credential configuration the flow asks for (setUpTenant creates it with `dpop: "required"`). */
export const CODE_FLOW_CONFIG = 'pid-dpop'
const REDIRECT = 'https://wallet.example/cb'
const CLIENT_ID = 'bench-wallet'
const b64 = (bytes: Buffer) => bytes.toString('base64url')
const sha256 = (text: string) => b64(createHash('sha256').update(text).digest())

/** A wallet's DPoP client: one key, and the server nonce of the latest answer (RFC 9449 §8). */
async function dpopClient() {
  const key = await generateKeyPair('ES256')
  const jwk = (await exportJWK(key.publicKey)) as JWK
  let nonce: string | undefined
  const proof = (htm: string, htu: string, ath?: string) =>
    new SignJWT({
      htm,
      htu,
      jti: b64(randomBytes(12)),
      ...(nonce ? { nonce } : {}),
      ...(ath ? { ath } : {}),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
      .setIssuedAt()
      .sign(key.privateKey)

  /** Sends with a proof; on use_dpop_nonce takes the fresh nonce and retries once. */
  async function send(
    url: string,
    init: { body: string; type: string; headers?: Record<string, string>; accessToken?: string },
  ): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const ath = init.accessToken ? sha256(init.accessToken) : undefined
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': init.type,
          dpop: await proof('POST', url, ath),
          ...(init.accessToken ? { authorization: `DPoP ${init.accessToken}` } : {}),
          ...init.headers,
        },
        body: init.body,
      })
      nonce = response.headers.get('dpop-nonce') ?? nonce
      if (response.ok || attempt > 0) return response
      const challenge = response.headers.get('www-authenticate') ?? ''
      const error = challenge.includes('use_dpop_nonce')
        ? 'use_dpop_nonce'
        : (
            (await response
              .clone()
              .json()
              .catch(() => ({}))) as Json
          ).error
      if (error !== 'use_dpop_nonce') return response
    }
  }
  return { send, seen: (response: Response) => (nonce = response.headers.get('dpop-nonce') ?? nonce) }
}

async function json(response: Response, step: string): Promise<Json> {
  if (!response.ok) throw new Error(`${step}: ${response.status} ${await response.text()}`)
  return (await response.json()) as Json
}

export async function createCodeFlow(base: string, tenant: string, auth: Record<string, string>) {
  const holder = await generateKeyPair('ES256')
  const holderJwk = await exportJWK(holder.publicKey)
  const dpop = await dpopClient()
  const form = (params: Record<string, string>) => ({
    body: new URLSearchParams(params).toString(),
    type: 'application/x-www-form-urlencoded',
  })

  return async (): Promise<void> => {
    const created = await json(
      await fetch(`${base}/api/offers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({
          credentialConfigurationIds: [CODE_FLOW_CONFIG],
          grant: 'authorization_code',
          claims: { [CODE_FLOW_CONFIG]: { given_name: 'Erika', age_over_18: true } },
          byReference: true,
        }),
      }),
      'offer',
    )
    const offer = await json(await fetch(created.credentialOfferUri as string), 'offer by reference')
    const issuer = offer.credential_issuer as string
    await json(await fetch(`${base}/.well-known/openid-credential-issuer/issuers/${tenant}`), 'metadata')

    const verifier = b64(randomBytes(32))
    const pushed = await json(
      await dpop.send(
        `${issuer}/par`,
        form({
          response_type: 'code',
          client_id: CLIENT_ID,
          redirect_uri: REDIRECT,
          code_challenge: sha256(verifier),
          code_challenge_method: 'S256',
          scope: CODE_FLOW_CONFIG,
          issuer_state: offer.grants.authorization_code.issuer_state,
          state: 'bench',
        }),
      ),
      'par',
    )
    const authorized = await fetch(
      `${issuer}/authorize?${new URLSearchParams({ client_id: CLIENT_ID, request_uri: pushed.request_uri })}`,
      { redirect: 'manual' },
    )
    const location = new URL(authorized.headers.get('location') ?? 'about:blank')
    const code = location.searchParams.get('code')
    if (!code || location.searchParams.get('iss') !== issuer)
      throw new Error(`authorize: ${authorized.status} ${location}`)

    const token = await json(
      await dpop.send(
        `${issuer}/token`,
        form({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
          client_id: CLIENT_ID,
        }),
      ),
      'token',
    )
    if (token.token_type !== 'DPoP') throw new Error(`token: token_type ${token.token_type}`)

    const nonceResponse = await fetch(`${issuer}/nonce`, { method: 'POST' })
    dpop.seen(nonceResponse)
    const { c_nonce } = await json(nonceResponse, 'nonce')
    const proof = await new SignJWT({ nonce: c_nonce })
      .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: holderJwk })
      .setAudience(issuer)
      .setIssuedAt()
      .sign(holder.privateKey)
    const issued = await json(
      await dpop.send(`${issuer}/credential`, {
        body: JSON.stringify({ credential_configuration_id: CODE_FLOW_CONFIG, proofs: { jwt: [proof] } }),
        type: 'application/json',
        accessToken: token.access_token,
      }),
      'credential',
    )
    if (!issued.credentials?.[0]?.credential) throw new Error('no credential issued')
  }
}
