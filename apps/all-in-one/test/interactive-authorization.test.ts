import { createHash, randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setGlobalConfig } from '@openid4vc/oauth2'
import { Encoder } from 'cbor-x'
import type { FastifyInstance } from 'fastify'
import { base64url, calculateJwkThumbprint, generateKeyPair, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { attester, keyPair, sign } from './attestation-fixtures'
import { listenAllInOneWorld } from './harness'
import {
  disclosedOf,
  initialRequestParams,
  type Keys,
  type Loose,
  NS,
  openid4vpResponse,
  pkce,
  postForm,
  redeem,
  requestOf,
} from './interactive-authorization-fixtures'
import { issueOverHttp, presentSdJwt, signedDeviceResponse } from './wallet'

setGlobalConfig({ allowInsecureUrls: true })
const PRESENTATION = 'urn:openid:dcp:ia:openid4vp_presentation'
const WEB = 'urn:openid:dcp:ia:auth_via_web'
// CBOR as ISO 18013-5 uses it: byte strings as such.
const cborEncoder = new Encoder({ useRecords: false, tagUint8Array: false, mapsAsObjects: false })

/**
 * Issue 26, part 1: presentation during issuance over Interactive Authorization (OpenID4VCI 1.1
 * working copy 2d9fd4a, profiling OAuth 2.0 for First-Party Applications -03). The wallet is built
 * by hand here: the @openid4vc libraries installed (0.4.6) do not implement this draft.
 */
describe('issue 26: Interactive Authorization (OpenID4VCI 1.1 §"Interactive Authorization", FiPA -03 §5), a hand-built wallet', () => {
  let app: FastifyInstance
  let baseUrl: string
  let issuer: string
  let ace: string
  let auth: Record<string, string>
  let authB: Record<string, string>
  let statements: () => number

  beforeAll(async () => {
    const started = await listenAllInOneWorld('interactive-authorization', {
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    })
    ;({ app, baseUrl } = started)
    statements = () => started.database.stats().statements
    auth = started.tenants.a.auth
    authB = started.tenants.b.auth
    issuer = `${baseUrl}/issuers/${started.tenants.a.id}`
    ace = `${issuer}/authorize-challenge`
  })
  afterAll(async () => {
    await app.close()
  })

  const issuePid = (
    claims: Record<string, unknown> = { given_name: 'Erika', family_name: 'Mustermann' },
    from = auth,
  ) => issueOverHttp({ apiBase: baseUrl, auth: from, configurationId: 'pid', claims })

  /** §"Initial Request": the PAR parameters and interaction_types_supported. */
  const initial = async (
    options: {
      types?: string[]
      configuration?: string
      dpop?: Keys
      redirectUri?: string
      /** Wallet attestation headers (ABCA). */
      attestation?: Record<string, string>
    } = {},
  ) => {
    const { verifier, challenge } = pkce()
    const answer = await postForm(
      ace,
      initialRequestParams(challenge, { ...options, types: options.types ?? [PRESENTATION, WEB] }),
      options.dpop,
      {},
      options.attestation,
    )
    return { ...answer, verifier }
  }

  /** §"Require Presentation" answered: the SD-JWT VC with its KB-JWT for `aud`, as `openid4vp_response`. */
  const present = async (
    body: Loose,
    pid: Awaited<ReturnType<typeof issuePid>>,
    options: {
      aud?: string
      authSession?: string
      disclose?: Record<string, boolean>
      dpop?: Keys
      attestation?: Record<string, string>
      /** Another presentation than the SD-JWT VC one (an mdoc). */
      vpToken?: (request: Loose) => Promise<string>
    } = {},
  ) => {
    const request = requestOf(body)
    const vp = options.vpToken
      ? await options.vpToken(request)
      : await presentSdJwt({
          credential: pid.credential,
          holder: pid.holder,
          disclose: options.disclose ?? { family_name: true, given_name: true },
          nonce: request.nonce,
          aud: options.aud ?? `ia:${new URL(ace).origin}`,
        })
    const response = await openid4vpResponse(request, { pid: [vp] })
    return postForm(
      ace,
      {
        auth_session: options.authSession ?? body.auth_session,
        openid4vp_response: JSON.stringify(response),
      },
      options.dpop,
      {},
      options.attestation,
    )
  }

  it('FiPA §4.1: the authorization server metadata names the authorization_challenge_endpoint', async () => {
    const metadata = (await (
      await fetch(`${baseUrl}/.well-known/oauth-authorization-server${new URL(issuer).pathname}`)
    ).json()) as Loose
    expect(metadata.authorization_challenge_endpoint).toBe(ace)
  })

  it('§"Require Presentation", §"Interactive Authorization Binding" (dc+sd-jwt), FiPA §5.2.1: a PID (SD-JWT VC) presented over IA → an mDL with family_name and given_name from the PID', async () => {
    const pid = await issuePid()
    const first = await initial()
    expect(first.status, JSON.stringify(first.body)).toBe(401)
    expect(first.headers.get('cache-control')).toContain('no-store')
    expect(first.body).toMatchObject({
      error: 'insufficient_authorization',
      interaction_type_required: PRESENTATION,
      auth_session: expect.any(String),
    })
    const request = requestOf(first.body)
    // Signed (x509 client id prefix): expected_origins is the endpoint's derived origin only.
    expect(request).toMatchObject({
      response_type: 'vp_token',
      response_mode: 'ia_post',
      expected_origins: [new URL(ace).origin],
      dcql_query: { credentials: [{ id: 'pid', format: 'dc+sd-jwt' }] },
    })
    expect(request).not.toHaveProperty('response_uri')
    const answered = await present(first.body, pid)
    expect(answered.status, JSON.stringify(answered.body)).toBe(200)
    expect(Object.keys(answered.body)).toStrictEqual(['authorization_code'])
    expect(await redeem(issuer, answered.body.authorization_code, first.verifier)).toStrictEqual({
      family_name: 'Mustermann',
      given_name: 'Erika',
    })
  })

  it("issue 44: the Initial Request sends 1 statement, the follow-up 2, the token 1 (the ceiling's count)", async () => {
    const pid = await issuePid()
    await initial() // the tenant's configurations and keys are cached from here on
    const counted = async <T>(step: () => Promise<T>) => {
      const before = statements()
      const result = await step()
      return { result, sent: statements() - before }
    }
    const flow = async () => {
      // The pushed request, waiting for the interaction, with its presentation session.
      const first = await counted(() => initial())
      expect(first.result.status).toBe(401)
      // auth_session taken (with its sender checks) with its presentation; verified + code + session.
      const answered = await counted(() => present(first.result.body, pid))
      expect(answered.result.status, JSON.stringify(answered.result.body)).toBe(200)
      // Code redeemed (PKCE and, without redirect_uri, only a code whose request had none) with its
      // bindings checked, the session's token issued and the grant's refresh chain decided.
      const token = await counted(() =>
        postForm(`${issuer}/token`, {
          grant_type: 'authorization_code',
          code: answered.result.body.authorization_code,
          code_verifier: first.result.verifier,
          client_id: 'wallet-1',
        }),
      )
      expect(token.result.status).toBe(200)
      return [first.sent, answered.sent, token.sent]
    }
    // A rate-limit flush or a scheduled job may land in a step's window: each step's fewest of
    // three flows is its own count, so one statement more in a step fails.
    const runs = [await flow(), await flow(), await flow()]
    expect([0, 1, 2].map((step) => Math.min(...runs.map((run) => run[step] as number)))).toStrictEqual([
      1, 2, 1,
    ])
  })

  it('issue 26: an attribute provider is asked with the presented credential (not a user), and its answer fills the rest of the mDL', async () => {
    const asked: Loose[] = []
    const provider = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk) => {
        body += chunk
      })
      req.on('end', () => {
        const request = JSON.parse(body) as Loose
        asked.push(request)
        const family = request.presentation?.credentials?.pid?.[0]?.family_name
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ [NS]: { document_number: `D-${family}` } }))
      })
    })
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve))
    try {
      const api = (path: string, payload: unknown) =>
        fetch(`${baseUrl}/api${path}`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify(payload),
        })
      const url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/attributes`
      expect((await api('/attribute-providers', { id: 'mdl-registry', url })).status).toBe(201)
      const created = await api('/credentials', {
        id: 'mdl-registry',
        config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL', scope: 'mdl-registry' },
        keyChainId: 'keys',
        attributeProviderId: 'mdl-registry',
        fields: [
          { path: ['family_name'], type: 'string', namespace: NS, mandatory: true },
          { path: ['document_number'], type: 'string', namespace: NS, mandatory: true },
        ],
        userAuthentication: {
          loginProviderId: 'pid-login',
          claims: { [`${NS}.family_name`]: ['family_name'] },
        },
      })
      expect(created.status, await created.text()).toBe(201)
      const pid = await issuePid()
      const first = await initial({ configuration: 'mdl-registry' })
      expect(first.status, JSON.stringify(first.body)).toBe(401)
      const answered = await present(first.body, pid)
      expect(answered.status, JSON.stringify(answered.body)).toBe(200)
      expect(
        await redeem(issuer, answered.body.authorization_code, first.verifier, 'mdl-registry'),
      ).toStrictEqual({
        family_name: 'Mustermann',
        document_number: 'D-Mustermann',
      })
      expect(asked).toHaveLength(1)
      expect(asked[0]).toMatchObject({
        credentialConfigurationId: 'mdl-registry',
        presentation: {
          presentationConfigId: 'pid-login',
          credentials: { pid: [expect.objectContaining({ family_name: 'Mustermann', given_name: 'Erika' })] },
        },
      })
      expect(asked[0]).not.toHaveProperty('user')
    } finally {
      await new Promise((resolve) => provider.close(resolve))
    }
  })

  it('§"Require Presentation": ia_post.jwt, the response encrypted to the request key (OpenID4VP 1.0 §8.3)', async () => {
    const pid = await issuePid({ given_name: 'Jan', family_name: 'Jansen' })
    const first = await initial({ configuration: 'mdl-enc' })
    expect(first.status, JSON.stringify(first.body)).toBe(401)
    expect(requestOf(first.body).response_mode).toBe('ia_post.jwt')
    const answered = await present(first.body, pid)
    expect(answered.status, JSON.stringify(answered.body)).toBe(200)
    expect(await redeem(issuer, answered.body.authorization_code, first.verifier, 'mdl-enc')).toMatchObject({
      family_name: 'Jansen',
    })
  })

  it('§"Interactive Authorization Binding" (mso_mdoc): an mdoc PID signed over the OpenID4VCIIAEHandover SessionTranscript (ia_post.jwt: with the key thumbprint) → an SD-JWT VC badge from its elements', async () => {
    const PID_NS = 'eu.europa.ec.eudi.pid.1'
    const pid = await issueOverHttp({
      apiBase: baseUrl,
      auth,
      configurationId: 'pid-mdoc',
      claims: { [PID_NS]: { family_name: 'Musterfrau', given_name: 'Erika' } },
    })
    const first = await initial({ configuration: 'badge' })
    expect(first.status, JSON.stringify(first.body)).toBe(401)
    const deviceResponse = async (request: Loose, endpoint = ace) => {
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
    const answered = await present(first.body, pid, { vpToken: (request) => deviceResponse(request) })
    expect(answered.status, JSON.stringify(answered.body)).toBe(200)
    expect(
      await redeem(issuer, answered.body.authorization_code, first.verifier, 'badge', disclosedOf),
    ).toMatchObject({
      family_name: 'Musterfrau',
      given_name: 'Erika',
    })
    // Signed over another endpoint (a forwarded request): the device signature does not verify.
    const forwarded = await initial({ configuration: 'badge' })
    const refused = await present(forwarded.body, pid, {
      vpToken: (request) => deviceResponse(request, 'https://attacker.example/authorize-challenge'),
    })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toBe('access_denied')
  })

  it('§"Require Presentation" (OpenID4VP 1.0 A.2): a redirect_uri client cannot sign, so the request is unsigned (no client_id, no expected_origins); the binding is the same', async () => {
    const pid = await issuePid({ given_name: 'Ola', family_name: 'Nordmann' })
    const first = await initial({ configuration: 'mdl-unsigned' })
    expect(first.status, JSON.stringify(first.body)).toBe(401)
    const request = first.body.openid4vp_request
    expect(request).not.toHaveProperty('request')
    expect(request).toMatchObject({
      response_type: 'vp_token',
      response_mode: 'ia_post',
      nonce: expect.any(String),
    })
    for (const absent of ['client_id', 'expected_origins', 'response_uri', 'state'])
      expect(request).not.toHaveProperty(absent)
    const answered = await present(first.body, pid)
    expect(answered.status, JSON.stringify(answered.body)).toBe(200)
    expect(
      await redeem(issuer, answered.body.authorization_code, first.verifier, 'mdl-unsigned'),
    ).toMatchObject({
      family_name: 'Nordmann',
    })
  })

  it('refused: a PID from an issuer the presentation configuration does not trust (access_denied)', async () => {
    const pid = await issuePid(undefined, authB)
    const first = await initial()
    const answered = await present(first.body, pid)
    expect(answered.status).toBe(400)
    expect(answered.body.error).toBe('access_denied')
  })

  it('§"Preventing Session Fixation Attacks", FiPA §5.2.2.1: a replayed presentation (the same auth_session again) is refused with invalid_session', async () => {
    const pid = await issuePid()
    const first = await initial()
    expect((await present(first.body, pid)).status).toBe(200)
    const again = await present(first.body, pid)
    expect(again.status).toBe(400)
    expect(again.body.error).toBe('invalid_session')
  })

  it('§"Preventing Session Fixation Attacks": a presentation made for another auth_session (its nonce) is refused, and that auth_session is used up', async () => {
    const pid = await issuePid()
    const mine = await initial()
    const other = await initial()
    const answered = await present(mine.body, pid, { authSession: other.body.auth_session })
    expect(answered.status).toBe(400)
    expect(answered.body.error).toBe('access_denied')
    expect(answered.body.error_description).toMatch(/nonce/i)
    expect((await present(other.body, pid)).body.error).toBe('invalid_session')
  })

  it('refused: a mapped claim not disclosed (family_name withheld) fails the presentation', async () => {
    const pid = await issuePid()
    const first = await initial()
    const answered = await present(first.body, pid, { disclose: { given_name: true } })
    expect(answered.status).toBe(400)
    expect(answered.body.error).toBe('access_denied')
  })

  it('refused: a PID without the mapped claim at all (none issued) cannot be presented for the mDL', async () => {
    const pid = await issuePid({ given_name: 'Erika' })
    const first = await initial()
    const answered = await present(first.body, pid, { disclose: { given_name: true, family_name: true } })
    expect(answered.status).toBe(400)
    expect(answered.body.error).toBe('access_denied')
  })

  it('§"Preventing Forwarding": a KB-JWT aud of the plain origin (no ia: prefix, a forwarded request) is refused', async () => {
    const pid = await issuePid()
    const first = await initial()
    const answered = await present(first.body, pid, { aud: new URL(ace).origin })
    expect(answered.status).toBe(400)
    expect(answered.body.error).toBe('access_denied')
  })

  it('issue 37, V-36, dc+sd-jwt §"Interactive Authorization Binding": its text says "the derived Origin … of the Authorization Challenge Endpoint, prefixed with `ia:`" and its example is "ia:https://example.com/authorize-challenge"; both forms are accepted, the earlier form’s `iae:` prefix is not', async () => {
    const pid = await issuePid()
    const endpointUrl = await initial()
    const accepted = await present(endpointUrl.body, pid, { aud: `ia:${ace}` })
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200)
    for (const aud of [`iae:${new URL(ace).origin}`, `iae:${ace}`, `ia:${ace}/other`]) {
      const first = await initial()
      const answered = await present(first.body, pid, { aud })
      expect(answered.status, aud).toBe(400)
      expect(answered.body.error, aud).toBe('access_denied')
    }
  })

  it('§"Preventing Session Fixation Attacks": the follow-up must carry the Initial Request’s DPoP key; another key is refused and the auth_session stays usable by its owner', async () => {
    const pid = await issuePid()
    const owner = await generateKeyPair('ES256')
    const first = await initial({ dpop: owner })
    expect(first.status, JSON.stringify(first.body)).toBe(401)
    const stranger = await generateKeyPair('ES256')
    const stolen = await present(first.body, pid, { dpop: stranger })
    expect(stolen.status).toBe(400)
    expect(stolen.body.error).toBe('invalid_dpop_proof')
    const none = await present(first.body, pid)
    expect(none.body.error).toBe('invalid_dpop_proof')
    const own = await present(first.body, pid, { dpop: owner })
    expect(own.status, JSON.stringify(own.body)).toBe(200)
  })

  it('§"Preventing Session Fixation Attacks", ABCA: a follow-up must come from the Initial Request’s attested wallet instance; none, another wallet’s or another instance’s attestation is refused and the owner can still finish', async () => {
    const own = await attester('IA Wallet')
    const other = await attester('IA Other Wallet')
    const providers = await fetch(`${baseUrl}/api/wallet-providers`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'ia-wallets',
        name: 'IA wallets',
        trustAnchors: [own.rootPem, other.rootPem],
      }),
    })
    expect(providers.status, await providers.text()).toBe(201)
    const attestation = async (from: typeof own, instance: Awaited<ReturnType<typeof keyPair>>) => {
      const now = Math.floor(Date.now() / 1000)
      const jwt = await sign(
        from.leaf,
        { typ: 'oauth-client-attestation+jwt', x5c: from.x5c },
        {
          iss: 'https://wallet.example.com',
          sub: 'wallet-1',
          exp: now + 600,
          iat: now,
          cnf: { jwk: instance.publicJwk },
        },
      )
      const pop = await sign(
        instance,
        { typ: 'oauth-client-attestation-pop+jwt' },
        { iss: 'wallet-1', aud: issuer, jti: randomBytes(12).toString('base64url'), iat: now },
      )
      return { 'oauth-client-attestation': jwt, 'oauth-client-attestation-pop': pop }
    }
    const pid = await issuePid()
    const instance = await keyPair()
    const first = await initial({ attestation: await attestation(own, instance) })
    expect(first.status, JSON.stringify(first.body)).toBe(401)
    const unattested = await present(first.body, pid)
    expect(unattested.status).toBe(401)
    expect(unattested.body.error).toBe('invalid_client')
    const foreign = await present(first.body, pid, { attestation: await attestation(other, await keyPair()) })
    expect(foreign.status).toBe(401)
    expect(foreign.body.error).toBe('invalid_client')
    // The same wallet product (client id, provider) on another device: another instance key.
    const sibling = await present(first.body, pid, { attestation: await attestation(own, await keyPair()) })
    expect(sibling.status).toBe(401)
    expect(sibling.body.error).toBe('invalid_client')
    const owner = await present(first.body, pid, { attestation: await attestation(own, instance) })
    expect(owner.status, JSON.stringify(owner.body)).toBe(200)
    expect(owner.body.authorization_code).toEqual(expect.any(String))
  })

  it('§"Authorization Challenge Error Response": no interaction type the server can use → 400 missing_interaction_type; without interaction_types_supported (a FiPA-only client) → FiPA §5.2.2.1.1 redirect_to_web', async () => {
    const unusable = await initial({ types: ['urn:example:ia:smart_card'] })
    expect(unusable.status).toBe(400)
    expect(unusable.body.error).toBe('missing_interaction_type')
    expect(unusable.headers.get('cache-control')).toContain('no-store')
    const { challenge } = pkce()
    const missing = await postForm(ace, {
      response_type: 'code',
      client_id: 'wallet-1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: 'mdl',
    })
    expect(missing.status).toBe(400)
    expect(missing.body.error).toBe('redirect_to_web')
    expect(missing.body).not.toHaveProperty('request_uri')
  })

  it('§"Authorization via Web": a wallet without openid4vp_presentation gets the pushed request_uri (with expires_in), usable once at /authorize', async () => {
    const first = await initial({ types: [WEB], redirectUri: 'https://wallet.example/cb' })
    expect(first.status, JSON.stringify(first.body)).toBe(401)
    expect(first.body).toMatchObject({
      error: 'insufficient_authorization',
      interaction_type_required: WEB,
      auth_session: expect.any(String),
      request_uri: expect.stringMatching(/^urn:ietf:params:oauth:request_uri:/),
      expires_in: expect.any(Number),
    })
    const authorize = () =>
      fetch(
        `${issuer}/authorize?${new URLSearchParams({ client_id: 'wallet-1', request_uri: first.body.request_uri })}`,
        { redirect: 'manual' },
      )
    const once = await authorize()
    const twice = await authorize()
    // The first use reaches the request (whatever the login page then does); the second does not.
    expect(once.status === 303 ? '' : await once.text()).not.toMatch(/request_uri is unknown/)
    expect(twice.status).toBe(400)
    expect(((await twice.json()) as Loose).error_description).toMatch(/request_uri is unknown, expired, used/)
    // The auth_session of a web interaction is not answered by a presentation.
    const pid = await issuePid()
    const presented = await postForm(ace, {
      auth_session: first.body.auth_session,
      openid4vp_response: JSON.stringify({ vp_token: { pid: [pid.credential] } }),
    })
    expect(presented.status).toBe(400)
  })

  it('§"Authorization via Web" needs a redirect_uri: without one, a web-only wallet is refused (invalid_request)', async () => {
    const first = await initial({ types: [WEB] })
    expect(first.status).toBe(400)
    expect(first.body.error).toBe('invalid_request')
  })
})
