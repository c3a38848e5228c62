/**
 * The bench's Interactive Authorization flow (issue 26; OpenID4VCI 1.1 working copy 2d9fd4a over
 * FiPA -03) over real HTTP, as a wallet drives it: Initial Request at the Authorization Challenge
 * Endpoint → 401 with a signed OpenID4VP request (ia_post) → follow-up with the PID (SD-JWT VC,
 * KB-JWT `aud` = `ia:` + origin) → 200 authorization_code → token (PKCE, no redirect_uri) → nonce →
 * credential (an mdoc filled from the PID). The PID is issued once; the wallet signs with jose in
 * this process: its CPU is not server CPU.
 */
import { createHash, randomBytes } from 'node:crypto'
import { decodeJwt } from 'jose'
import { holderProof, issueOverHttp, presentSdJwt } from '../test/wallet'

// biome-ignore lint/suspicious/noExplicitAny: loosely typed JSON answers
type Json = Record<string, any>

/** The configuration asked for (setUpTenant creates it with a `presentation` login provider). */
export const INTERACTIVE_CONFIG = 'mdl-ia'
const NS = 'org.iso.18013.5.1'
const CLIENT_ID = 'bench-wallet'

/** What setUpTenant adds for the flow: the PID query, its login provider, the mdoc it fills. */
export async function setUpInteractive(post: (path: string, body: unknown) => Promise<unknown>) {
  await post('/api/presentations', {
    id: 'pid-login',
    keyChainId: 'keys',
    responseMode: 'direct_post',
    dcqlQuery: {
      credentials: [
        {
          id: 'pid',
          format: 'dc+sd-jwt',
          meta: { vct_values: ['urn:bench:pid'] },
          claims: [{ path: ['given_name'] }],
        },
      ],
    },
  })
  await post('/api/login-providers', {
    id: 'pid-login',
    kind: 'presentation',
    presentationConfigId: 'pid-login',
  })
  await post('/api/credentials', {
    id: INTERACTIVE_CONFIG,
    config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
    keyChainId: 'keys',
    fields: [{ path: ['given_name'], type: 'string', namespace: NS, mandatory: true }],
    userAuthentication: { loginProviderId: 'pid-login', claims: { [`${NS}.given_name`]: ['given_name'] } },
  })
}

const form = (body: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(body),
})

async function json(response: Response, status: number, step: string): Promise<Json> {
  const body = (await response.json()) as Json
  if (response.status !== status) throw new Error(`${step}: ${response.status} ${JSON.stringify(body)}`)
  return body
}

/** The flow against one tenant: five requests (challenge twice, token, nonce, credential). */
export async function createInteractiveFlow(base: string, tenant: string, auth: Record<string, string>) {
  const pid = await issueOverHttp({
    apiBase: base,
    auth,
    configurationId: 'pid',
    claims: { given_name: 'Erika' },
  })
  const issuer = `${base}/issuers/${tenant}`
  const endpoint = `${issuer}/authorize-challenge`
  return async () => {
    const verifier = randomBytes(32).toString('base64url')
    const challenge = await json(
      await fetch(
        endpoint,
        form({
          response_type: 'code',
          client_id: CLIENT_ID,
          code_challenge: createHash('sha256').update(verifier).digest('base64url'),
          code_challenge_method: 'S256',
          scope: INTERACTIVE_CONFIG,
          interaction_types_supported: 'urn:openid:dcp:ia:openid4vp_presentation',
        }),
      ),
      401,
      'initial request',
    )
    const request = decodeJwt(challenge.openid4vp_request.request)
    const vp = await presentSdJwt({
      credential: pid.credential,
      holder: pid.holder,
      disclose: { given_name: true },
      nonce: request.nonce as string,
      aud: `ia:${new URL(endpoint).origin}`,
    })
    const { authorization_code: code } = await json(
      await fetch(
        endpoint,
        form({
          auth_session: challenge.auth_session,
          openid4vp_response: JSON.stringify({ vp_token: { pid: [vp] } }),
        }),
      ),
      200,
      'follow-up',
    )
    const token = await json(
      await fetch(
        `${issuer}/token`,
        form({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: CLIENT_ID }),
      ),
      200,
      'token',
    )
    const { c_nonce } = await json(await fetch(`${issuer}/nonce`, { method: 'POST' }), 200, 'nonce')
    const { proof } = await holderProof(issuer, c_nonce)
    await json(
      await fetch(`${issuer}/credential`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token.access_token}` },
        body: JSON.stringify({ credential_configuration_id: INTERACTIVE_CONFIG, proofs: { jwt: [proof] } }),
      }),
      200,
      'credential',
    )
  }
}
