import { createHash, randomBytes } from 'node:crypto'
import { queryRows, type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import { sql } from 'drizzle-orm'
import { expect } from 'vitest'
import { freePort } from './free-port'
import { bearer, startAllInOne } from './harness'
import { resolveAndAnswer } from './oid4vp-wallet'
import { issue, setUpTenant, VCT } from './session-fixtures'
import { holderProof, kbSigner } from './wallet'

export const REDIRECT = 'https://wallet.example/cb'
// biome-ignore lint/suspicious/noExplicitAny: tests read loosely typed JSON answers
type Json = any
export type Issued = Awaited<ReturnType<typeof issue>>

export const b64 = (bytes: Buffer) => bytes.toString('base64url')
const unescapeHtml = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')

/** The page's two requests and status URL, as a wallet (or a test) reads them from the HTML. */
export function readPage(html: string) {
  const pick = (pattern: RegExp) => unescapeHtml((pattern.exec(html) as RegExpExecArray)[1] as string)
  return {
    sameDevice: pick(/id="same-device" href="([^"]+)"/),
    crossDevice: pick(/<code id="cross-device-request">([^<]+)<\/code>/),
    status: pick(/data-status="([^"]+)"/),
  }
}

/**
 * Issue 26: an all-in-one listening at `host`, a tenant issuing a PID (SD-JWT VC) and a `badge`
 * whose login provider `pid-login` is of kind presentation (holder_name ← the PID's given_name),
 * a PID of it and one of another tenant (untrusted here).
 */
export async function startPresentationLogin(host = '127.0.0.1') {
  const port = await freePort()
  const baseUrl = `http://${host}:${port}`
  const started = await startAllInOne(testDatabases().at(-1) as TestDatabase, baseUrl, {
    OUTBOUND_ALLOW_HTTP: 'true',
    OUTBOUND_ALLOWED_HOSTS: '127.0.0.1,localhost',
  })
  const app = started.app
  await app.listen({ host: host === 'localhost' ? '::' : host, port })
  const root = await bearer(app, started.rootClientId, started.rootSecret)
  const tenant = `plogin-${randomBytes(4).toString('hex')}`
  const roles = [
    'key:manage',
    'issuance:config',
    'issuance:offer',
    'presentation:config',
    'presentation:request',
  ]
  const { auth } = await setUpTenant(app, root, tenant, roles)
  const other = await setUpTenant(app, root, `${tenant}-x`, roles)
  const post = async (url: string, payload: object) => {
    const response = await app.inject({ method: 'POST', url, headers: auth, payload })
    expect(response.statusCode, response.body).toBe(201)
  }
  await post('/api/presentations', {
    id: 'pid-login',
    keyChainId: 'keys',
    responseMode: 'direct_post',
    dcqlQuery: {
      credentials: [
        { id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: [VCT] }, claims: [{ path: ['given_name'] }] },
      ],
    },
  })
  await post('/api/login-providers', {
    id: 'pid-login',
    kind: 'presentation',
    presentationConfigId: 'pid-login',
  })
  await post('/api/credentials', {
    id: 'badge',
    config: { format: 'dc+sd-jwt', vct: 'urn:example:badge' },
    keyChainId: 'keys',
    fields: [{ path: ['holder_name'], type: 'string' }],
    userAuthentication: { loginProviderId: 'pid-login', claims: { holder_name: ['given_name'] } },
  })
  const pid = await issue(app, auth, { given_name: 'Erika', age_over_18: true })
  // A PID of another tenant: an issuer this tenant's presentation configuration does not trust.
  const untrustedPid = await issue(app, other.auth, { given_name: 'Mallory', age_over_18: true })
  const issuer = `${baseUrl}/issuers/${tenant}`

  /** PAR for `badge` (no offer: the presentation logs the holder in): the request_uri and PKCE verifier. */
  async function push() {
    const verifier = b64(randomBytes(32))
    const challenge = b64(createHash('sha256').update(verifier).digest())
    const pushed = await fetch(`${issuer}/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        response_type: 'code',
        client_id: 'wallet-1',
        redirect_uri: REDIRECT,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        scope: 'badge',
        state: 'wallet-state',
      }).toString(),
    })
    expect(pushed.status).toBe(201)
    const { request_uri } = (await pushed.json()) as Json
    return {
      verifier,
      authorizeUrl: `${issuer}/authorize?${new URLSearchParams({ client_id: 'wallet-1', request_uri })}`,
    }
  }

  /** The wallet answers a request URI with the PID (the DCQL query's `pid`), disclosing given_name. */
  const present = (
    requestUri: string,
    credential: Issued = pid,
    disclose: Record<string, boolean> = { given_name: true },
  ) =>
    resolveAndAnswer(requestUri, async (request) => {
      const wallet = new SDJwtVcInstance({
        hasher: digest,
        saltGenerator: generateSalt,
        kbSigner: kbSigner(credential.holder.privateKey),
        kbSignAlg: 'ES256',
      })
      const vp = await wallet.present(credential.credential, disclose, {
        kb: {
          payload: {
            iat: Math.floor(Date.now() / 1000),
            nonce: request.nonce as string,
            aud: request.client_id as string,
          },
        },
      })
      return { pid: [vp] }
    })

  /** Token and credential for a code: the badge's claims. */
  async function redeem(code: string, verifier: string) {
    const token = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
        client_id: 'wallet-1',
      }).toString(),
    })
    const tokens = (await token.json()) as Json
    expect(token.status, JSON.stringify(tokens)).toBe(200)
    const { c_nonce } = (await (await fetch(`${issuer}/nonce`, { method: 'POST' })).json()) as Json
    const { proof } = await holderProof(issuer, c_nonce)
    const credential = await fetch(`${issuer}/credential`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.access_token}` },
      body: JSON.stringify({ credential_configuration_id: 'badge', proofs: { jwt: [proof] } }),
    })
    const body = (await credential.json()) as Json
    expect(credential.status, JSON.stringify(body)).toBe(200)
    return (await new SDJwtVcInstance({ hasher: digest }).getClaims(body.credentials[0].credential)) as Json
  }

  /** The presentation sessions the login provider's logins created: status and whether a result is kept. */
  async function loginSessions() {
    const rows = await queryRows<{ id: string; status: string; kept: boolean }>(
      started.database.db,
      sql`select id, status, result_encrypted is not null as kept from presentation_sessions
          where tenant_id = ${tenant} and created_by_client_id = 'issuer/login/pid-login'`,
    )
    return rows
  }

  return { app, baseUrl, issuer, auth, pid, untrustedPid, push, present, redeem, loginSessions }
}
