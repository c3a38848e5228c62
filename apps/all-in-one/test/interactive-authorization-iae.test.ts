import { createHash } from 'node:crypto'
import { Encoder } from 'cbor-x'
import type { FastifyInstance } from 'fastify'
import { base64url, calculateJwkThumbprint, generateKeyPair, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listenAllInOneWorld } from './harness'
import {
  disclosedOf,
  initialRequestParams,
  type Keys,
  type Loose,
  openid4vpResponse,
  pkce,
  postForm,
  redeem,
  requestOf,
} from './interactive-authorization-fixtures'
import { issueOverHttp, presentSdJwt, signedDeviceResponse } from './wallet'

// CBOR as ISO 18013-5 uses it: byte strings as such.
const cborEncoder = new Encoder({ useRecords: false, tagUint8Array: false, mapsAsObjects: false })
// The interaction type names of the earlier form: the plain names deployed wallets send, and the
// URNs the draft gave them before it moved to FiPA (openid/OpenID4VCI 33d8c5a).
const PRESENTATION = 'openid4vp_presentation'
const WEB = 'redirect_to_web'
const PRESENTATION_URN = 'urn:openid:dcp:iae:openid4vp_presentation'

/**
 * Issue 37 item 2, checklist V-36: the earlier Interactive Authorization Endpoint (IAE) form of
 * OpenID4VCI 1.1 (working copy before 2d9fd4a, last at openid/OpenID4VCI 4ef9f26), served next to
 * the current FiPA form. The wallet here is written from that text and speaks only the IAE form:
 * it finds `interactive_authorization_endpoint`, reads `status` / `type` answers, answers with
 * `iae_post(.jwt)` and binds with `iae:`.
 */
describe('issue 37, V-36: Interactive Authorization, the earlier IAE form (OpenID4VCI 1.1 before 2d9fd4a, §"Interactive Authorization Endpoint"), a wallet that speaks only it', () => {
  let app: FastifyInstance
  let baseUrl: string
  let issuer: string
  let iae: string
  let auth: Record<string, string>

  beforeAll(async () => {
    const started = await listenAllInOneWorld('interactive-authorization', {
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    })
    ;({ app, baseUrl } = started)
    auth = started.tenants.a.auth
    issuer = `${baseUrl}/issuers/${started.tenants.a.id}`
    const metadata = (await (
      await fetch(`${baseUrl}/.well-known/oauth-authorization-server${new URL(issuer).pathname}`)
    ).json()) as Loose
    // The wallet learns the endpoint from the metadata only, as the IAE text has it.
    iae = metadata.interactive_authorization_endpoint
  })
  afterAll(async () => {
    await app.close()
  })

  const issuePid = (claims: Record<string, unknown> = { given_name: 'Erika', family_name: 'Mustermann' }) =>
    issueOverHttp({ apiBase: baseUrl, auth, configurationId: 'pid', claims })

  /** §"Initial Request": a PAR request plus interaction_types_supported. */
  const initial = async (
    options: { types?: string[]; configuration?: string; dpop?: Keys; redirectUri?: string } = {},
  ) => {
    const { verifier, challenge } = pkce()
    const answer = await postForm(
      iae,
      initialRequestParams(challenge, { ...options, types: options.types ?? [PRESENTATION, WEB] }),
      options.dpop,
    )
    return { ...answer, verifier }
  }

  /** §"Require Presentation": the follow-up with auth_session and openid4vp_response. */
  const present = async (
    body: Loose,
    pid: Awaited<ReturnType<typeof issuePid>>,
    options: { aud?: string; to?: string; dpop?: Keys; vpToken?: (request: Loose) => Promise<string> } = {},
  ) => {
    const request = requestOf(body)
    const vp = options.vpToken
      ? await options.vpToken(request)
      : await presentSdJwt({
          credential: pid.credential,
          holder: pid.holder,
          disclose: { family_name: true, given_name: true },
          nonce: request.nonce,
          aud: options.aud ?? `iae:${new URL(iae).origin}`,
        })
    return postForm(
      options.to ?? iae,
      {
        auth_session: body.auth_session,
        openid4vp_response: JSON.stringify(await openid4vpResponse(request, { pid: [vp] })),
      },
      options.dpop,
    )
  }

  it('V-36, §"OAuth 2.0 Authorization Server Metadata": interactive_authorization_endpoint is published next to authorization_challenge_endpoint; "If omitted, the default value is `false`" for require_interactive_authorization_request, which is false (PAR and /authorize serve too)', async () => {
    const metadata = (await (
      await fetch(`${baseUrl}/.well-known/oauth-authorization-server${new URL(issuer).pathname}`)
    ).json()) as Loose
    expect(metadata.interactive_authorization_endpoint).toBe(`${issuer}/interactive-authorization`)
    expect(metadata.require_interactive_authorization_request).toBe(false)
    expect(metadata.authorization_challenge_endpoint).toBe(`${issuer}/authorize-challenge`)
  })

  it('V-36, §"Require Presentation", §"Authorization Code Response", SD-JWT VC §"Interactive Authorization Endpoint Binding" ("the derived Origin … prefixed with `iae:`"): a PID presented with iae_post → {status: ok, code} → an mDL with the PID’s names', async () => {
    const pid = await issuePid()
    const first = await initial()
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.headers.get('cache-control')).toContain('no-store')
    // "The Authorization Server MUST NOT set this to a value that was not included in the
    // `interaction_types_supported` parameter": the wallet's own name comes back.
    expect(first.body).toMatchObject({
      status: 'require_interaction',
      type: PRESENTATION,
      auth_session: expect.any(String),
    })
    expect(first.body).not.toHaveProperty('error')
    const request = requestOf(first.body)
    // "If `expected_origins` is present, it MUST contain only the derived Origin of the Interactive
    // Authorization Endpoint"; "The `response_mode` MUST be either `iae_post` … or `iae_post.jwt`".
    expect(request).toMatchObject({
      response_type: 'vp_token',
      response_mode: 'iae_post',
      expected_origins: [new URL(iae).origin],
    })
    const answered = await present(first.body, pid)
    expect(answered.status, JSON.stringify(answered.body)).toBe(200)
    expect(answered.body).toStrictEqual({ status: 'ok', code: expect.any(String) })
    expect(await redeem(issuer, answered.body.code, first.verifier)).toStrictEqual({
      family_name: 'Mustermann',
      given_name: 'Erika',
    })
  })

  it('V-36, §"Require Presentation": the URN type names and iae_post.jwt (encrypted, OpenID4VP 1.0 §8.3); a KB-JWT aud of `iae:` + the endpoint URL (as deployed wallets send it) is accepted too', async () => {
    const pid = await issuePid({ given_name: 'Jan', family_name: 'Jansen' })
    const first = await initial({ configuration: 'mdl-enc', types: [PRESENTATION_URN] })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.body.type).toBe(PRESENTATION_URN)
    expect(requestOf(first.body).response_mode).toBe('iae_post.jwt')
    const answered = await present(first.body, pid, { aud: `iae:${iae}` })
    expect(answered.status, JSON.stringify(answered.body)).toBe(200)
    expect(await redeem(issuer, answered.body.code, first.verifier, 'mdl-enc')).toMatchObject({
      family_name: 'Jansen',
    })
  })

  it('V-36, mso_mdoc §"Interactive Authorization Endpoint Binding": OpenID4VCIIAEHandover over the IAE endpoint URL ("MUST NOT be prefixed with `iae:`"), nonce and key thumbprint → a badge; signed over the other form’s endpoint it is refused', async () => {
    const PID_NS = 'eu.europa.ec.eudi.pid.1'
    const pid = await issueOverHttp({
      apiBase: baseUrl,
      auth,
      configurationId: 'pid-mdoc',
      claims: { [PID_NS]: { family_name: 'Musterfrau', given_name: 'Erika' } },
    })
    const deviceResponse = async (request: Loose, endpoint: string) => {
      const jwk = request.client_metadata.jwks.keys[0] as JWK
      const info = cborEncoder.encode([
        endpoint,
        request.nonce,
        base64url.decode(await calculateJwkThumbprint(jwk)),
      ])
      const handover = createHash('sha256').update(info).digest()
      return base64url.encode(
        await signedDeviceResponse({
          credential: pid.credential,
          holder: pid.holder,
          docType: PID_NS,
          sessionTranscript: [null, null, ['OpenID4VCIIAEHandover', handover]],
        }),
      )
    }
    const first = await initial({ configuration: 'badge' })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    const answered = await present(first.body, pid, { vpToken: (request) => deviceResponse(request, iae) })
    expect(answered.status, JSON.stringify(answered.body)).toBe(200)
    expect(await redeem(issuer, answered.body.code, first.verifier, 'badge', disclosedOf)).toMatchObject({
      family_name: 'Musterfrau',
    })
    const other = await initial({ configuration: 'badge' })
    const refused = await present(other.body, pid, {
      vpToken: (request) => deviceResponse(request, `${issuer}/authorize-challenge`),
    })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toBe('access_denied')
  })

  it('V-36, SD-JWT VC §"Interactive Authorization Endpoint Binding": a KB-JWT aud with the other form’s `ia:` prefix, or no prefix, is refused ("If any Verifiable Presentation with Holder Binding is not correctly bound … the response MUST be rejected")', async () => {
    const pid = await issuePid()
    for (const aud of [`ia:${new URL(iae).origin}`, `ia:${iae}`, iae, `iae:https://attacker.example`]) {
      const first = await initial()
      const answered = await present(first.body, pid, { aud })
      expect(answered.status, aud).toBe(400)
      expect(answered.body.error, aud).toBe('access_denied')
      expect(answered.body.error_description, aud).toMatch(/aud/)
    }
  })

  it('§"Preventing Session Fixation Attacks": a replayed follow-up (the same auth_session again) is refused with invalid_session', async () => {
    const pid = await issuePid()
    const first = await initial()
    expect((await present(first.body, pid)).status).toBe(200)
    const again = await present(first.body, pid)
    expect(again.status).toBe(400)
    expect(again.body.error).toBe('invalid_session')
  })

  it('V-36, mixed forms: an auth_session belongs to the endpoint that gave it; at the other form’s endpoint it is unknown (invalid_session) and not used up, so it still completes at its own', async () => {
    const pid = await issuePid()
    const fromIae = await initial()
    const elsewhere = await present(fromIae.body, pid, { to: `${issuer}/authorize-challenge` })
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.body.error).toBe('invalid_session')
    expect((await present(fromIae.body, pid)).body).toMatchObject({ status: 'ok' })
    // And the other way: a FiPA auth_session (a 401 insufficient_authorization) at the IAE endpoint.
    const { challenge } = pkce()
    const fipa = await postForm(`${issuer}/authorize-challenge`, {
      response_type: 'code',
      client_id: 'wallet-1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: 'mdl',
      interaction_types_supported: 'urn:openid:dcp:ia:openid4vp_presentation',
    })
    expect(fipa.status, JSON.stringify(fipa.body)).toBe(401)
    const crossed = await present(fipa.body, pid, { aud: `ia:${new URL(iae).origin}` })
    expect(crossed.status).toBe(400)
    expect(crossed.body.error).toBe('invalid_session')
    const own = await present(fipa.body, pid, {
      aud: `ia:${new URL(iae).origin}`,
      to: `${issuer}/authorize-challenge`,
    })
    expect(own.status, JSON.stringify(own.body)).toBe(200)
    expect(own.body).toStrictEqual({ authorization_code: expect.any(String) })
  })

  it('§"Preventing Session Fixation Attacks": the follow-up must carry the Initial Request’s DPoP key, as at the FiPA endpoint', async () => {
    const pid = await issuePid()
    const owner = await generateKeyPair('ES256')
    const first = await initial({ dpop: owner })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    const stolen = await present(first.body, pid, { dpop: await generateKeyPair('ES256') })
    expect(stolen.body.error).toBe('invalid_dpop_proof')
    expect((await present(first.body, pid, { dpop: owner })).body).toMatchObject({ status: 'ok' })
  })

  it('§"Initial Request" ("`interaction_types_supported`: REQUIRED"), §"Interactive Authorization Error Response": without it → invalid_request (no FiPA fallback); only types the server cannot use (here the FiPA URNs) → missing_interaction_type naming the IAE type', async () => {
    const { challenge } = pkce()
    const missing = await postForm(iae, {
      response_type: 'code',
      client_id: 'wallet-1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: 'mdl',
    })
    expect(missing.status).toBe(400)
    expect(missing.body).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringMatching(/interaction_types_supported is required/),
    })
    const unusable = await initial({ types: ['urn:openid:dcp:ia:openid4vp_presentation'] })
    expect(unusable.status).toBe(400)
    expect(unusable.body.error).toBe('missing_interaction_type')
    expect(unusable.body.error_description).toContain(PRESENTATION_URN)
  })

  it('§"Redirect to Web": a wallet with only redirect_to_web gets the pushed request_uri and expires_in in a require_interaction answer', async () => {
    const first = await initial({ types: [WEB], redirectUri: 'https://wallet.example/cb' })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.body).toMatchObject({
      status: 'require_interaction',
      type: WEB,
      request_uri: expect.stringMatching(/^urn:ietf:params:oauth:request_uri:/),
      expires_in: expect.any(Number),
    })
    const authorize = await fetch(
      `${issuer}/authorize?${new URLSearchParams({ client_id: 'wallet-1', request_uri: first.body.request_uri })}`,
      { redirect: 'manual' },
    )
    expect(authorize.status === 303 ? '' : await authorize.text()).not.toMatch(/request_uri is unknown/)
  })
})
