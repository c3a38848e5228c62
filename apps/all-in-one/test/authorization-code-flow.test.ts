import { createHash, randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { clientAuthenticationNone, setGlobalConfig } from '@openid4vc/oauth2'
import { Openid4vciClient } from '@openid4vc/openid4vci'
import type { FastifyInstance } from 'fastify'
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import Provider from 'oidc-provider'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { startAllInOneWorld } from './harness'

// The wallet is oid4vc-ts over real HTTP; the upstream login is a real oidc-provider.
setGlobalConfig({ allowInsecureUrls: true })

const REDIRECT = 'https://wallet.example/cb'
const b64 = (bytes: Buffer) => bytes.toString('base64url')
const pkce = () => {
  const verifier = b64(randomBytes(32))
  return { verifier, challenge: b64(createHash('sha256').update(verifier).digest()) }
}
// biome-ignore lint/suspicious/noExplicitAny: tests read loosely typed JSON answers
type Json = any

async function walletFor() {
  const holder = await generateKeyPair('ES256')
  const publicJwk = (await exportJWK(holder.publicKey)) as JWK
  const wallet = new Openid4vciClient({
    callbacks: {
      clientAuthentication: clientAuthenticationNone({ clientId: 'wallet-1' }),
      hash: (data, alg) => new Uint8Array(createHash(alg.replace('-', '')).update(data).digest()),
      generateRandom: (length) => new Uint8Array(randomBytes(length)),
      signJwt: async (_signer, { header, payload }) => ({
        jwt: await new SignJWT(payload).setProtectedHeader(header as never).sign(holder.privateKey),
        signerJwk: publicJwk as never,
      }),
    },
  })
  return { wallet, publicJwk }
}

type Jar = Map<string, string>
const cookieOf = (jar: Jar) => [...jar].map(([k, v]) => `${k}=${v}`).join('; ')
const keep = (jar: Jar, response: Response) => {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';')
    const [name, ...value] = (pair as string).split('=')
    jar.set(name as string, value.join('='))
  }
}

/** A browser with a cookie jar, following redirects until it reaches `stopAt`. */
async function browse(
  start: string,
  stopAt: string,
  act: (url: string, cookie: string) => Promise<Response | undefined>,
  jar: Jar = new Map(),
) {
  let url = start
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(stopAt)) return new URL(url)
    const cookie = cookieOf(jar)
    const response =
      (await act(url, cookie)) ?? (await fetch(url, { redirect: 'manual', headers: { cookie } }))
    keep(jar, response)
    const location = response.headers.get('location')
    if (!location) throw new Error(`no redirect from ${url}: ${response.status} ${await response.text()}`)
    url = new URL(location, url).toString()
  }
  throw new Error('too many redirects')
}

describe('OpenID4VCI 1.0 §5 authorization code flow (PAR, PKCE, issuer_state, upstream login)', () => {
  let app: FastifyInstance
  let baseUrl: string
  let admin: Record<string, string>
  let upstream: Server
  let upstreamUrl: string
  let attributes: Server
  const attributeCalls: Json[] = []
  const subjects = new Map<string, string>()
  let pendingAnswers = 0
  /** Moves the service's clock (expiry tests). */
  let skewMs = 0
  let tenant: string
  let otherTenant: string
  const issuer = () => `${baseUrl}/issuers/${tenant}`

  const post = async (url: string, body: unknown, headers: Record<string, string> = admin) => {
    const response = await fetch(`${baseUrl}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
    return { status: response.status, body: (await response.json()) as Json }
  }
  const par = async (params: Record<string, string>) => {
    const response = await fetch(`${issuer()}/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    })
    return { status: response.status, headers: response.headers, body: (await response.json()) as Json }
  }
  const token = async (params: Record<string, string>) => {
    const response = await fetch(`${issuer()}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    })
    return { status: response.status, body: (await response.json()) as Json }
  }
  const authorize = (clientId: string, requestUri: string) =>
    fetch(`${issuer()}/authorize?${new URLSearchParams({ client_id: clientId, request_uri: requestUri })}`, {
      redirect: 'manual',
    })
  const offer = async (body: Record<string, unknown> = {}) =>
    (
      await post('/api/offers', {
        credentialConfigurationIds: ['pid'],
        grant: 'authorization_code',
        claims: { pid: { given_name: 'Erika' } },
        ...body,
      })
    ).body
  /** The pushed request of wallet-1 for `pid` with PKCE S256; `extra` adds or overrides parameters. */
  const pushedParams = (challenge: string, extra: Record<string, string> = {}) => ({
    response_type: 'code',
    client_id: 'wallet-1',
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'pid',
    ...extra,
  })
  /** PAR with issuer_state, then /authorize: the code and its PKCE verifier. */
  async function codeFor(issuerState: string, extra: Record<string, string> = {}) {
    const { verifier, challenge } = pkce()
    const pushed = await par(
      pushedParams(challenge, {
        issuer_state: issuerState,
        state: 'st-1',
        ...extra,
      }),
    )
    expect(pushed.status).toBe(201)
    const location = new URL(
      (await authorize('wallet-1', pushed.body.request_uri)).headers.get('location') as string,
    )
    return { code: location.searchParams.get('code') as string, verifier, location }
  }

  beforeAll(async () => {
    const port = await freePort()
    baseUrl = `http://127.0.0.1:${port}`
    // The upstream OpenID provider listens first: the world's login providers name its URL.
    upstream = createServer()
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
    // An attribute provider that answers for the logged-in user.
    attributes = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk) => {
        body += chunk
      })
      req.on('end', () => {
        const request = JSON.parse(body) as Json
        attributeCalls.push(request)
        // The user comes with the call after the login; later calls name the session only.
        if (request.user) subjects.set(request.sessionId, request.user.sub)
        if (pendingAnswers > 0) {
          pendingAnswers--
          res.writeHead(202, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ status: 'pending', interval: 1 }))
          return
        }
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ family_name: `Registry-${subjects.get(request.sessionId)}` }))
      })
    })
    await new Promise<void>((resolve) => attributes.listen(0, '127.0.0.1', resolve))
    // The `code-flow` world (test/worlds/code-flow): tenant a's login providers idp, idp2 and
    // idp-address at the upstream, attribute provider registry at `attributes`; tenant b a `pid`
    // of its own (S-103).
    const started = await startAllInOneWorld(
      testDatabases().at(-1) as TestDatabase,
      'code-flow',
      baseUrl,
      {
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
        UPSTREAM_URL: upstreamUrl,
        UPSTREAM_CLIENT_SECRET: 'issuer-login-secret-value',
        ATTRIBUTE_PROVIDER_URL: `http://127.0.0.1:${(attributes.address() as AddressInfo).port}/attributes`,
      },
      () => new Date(Date.now() + skewMs),
    )
    app = started.app
    await app.listen({ host: '127.0.0.1', port })
    tenant = started.tenants.a.id
    otherTenant = started.tenants.b.id
    admin = started.tenants.a.auth
    // The imported login provider keeps its secret and never shows it.
    const login = await app.inject({ url: '/api/login-providers/idp', headers: admin })
    expect(login.statusCode, login.body).toBe(200)
    expect(login.json().hasClientSecret).toBe(true)
    expect(login.json()).not.toHaveProperty('clientSecret')

    // The upstream's client redirects to this tenant's callback, known once the world started.
    const provider = new Provider(upstreamUrl, {
      clients: [
        {
          client_id: 'issuer-login',
          client_secret: 'issuer-login-secret-value',
          redirect_uris: [`${issuer()}/authorize/callback`],
        },
      ],
      claims: { openid: ['sub'], profile: ['given_name', 'family_name'], address: ['address'] },
      findAccount: (_ctx, sub) => ({
        accountId: sub,
        // An address holding SD-JWT structure (S-129), released for the `address` scope only.
        claims: () => ({
          sub,
          given_name: `Given-${sub}`,
          family_name: 'Mustermann',
          address: { _sd: ['holder-chosen-digest'] },
        }),
      }),
      pkce: { required: () => true },
    })
    upstream.on('request', provider.callback())
  })
  afterAll(async () => {
    await app.close()
    upstream.close()
    attributes.close()
  })

  /** Logs `user` in at the upstream provider through its development pages. */
  const loginAs = (user: string) => async (url: string, cookie: string) => {
    const interaction = /\/interaction\/([^/?]+)$/.exec(new URL(url).pathname)
    if (!url.startsWith(upstreamUrl) || !interaction) return undefined
    const page = await (await fetch(url, { headers: { cookie } })).text()
    const prompt: Record<string, string> = page.includes('name="login"')
      ? { prompt: 'login', login: user, password: 'x' }
      : { prompt: 'consent' }
    return fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(prompt).toString(),
    })
  }
  const loginAsAlice = loginAs('alice')

  /** A key proof (OpenID4VCI F.1) of a fresh holder key over a fresh c_nonce. */
  async function freshProof() {
    const holder = await generateKeyPair('ES256')
    const { c_nonce } = (await (await fetch(`${issuer()}/nonce`, { method: 'POST' })).json()) as Json
    return new SignJWT({ aud: issuer(), nonce: c_nonce, iat: Math.floor(Date.now() / 1000) })
      .setProtectedHeader({
        alg: 'ES256',
        typ: 'openid4vci-proof+jwt',
        jwk: await exportJWK(holder.publicKey),
      })
      .sign(holder.privateKey)
  }

  /** A proof-bound credential request with a fresh holder key; the SD-JWT payload and disclosures. */
  async function requestCredential(accessToken: string, configurationId: string) {
    const proof = await freshProof()
    const response = await fetch(`${issuer()}/credential`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
      body: JSON.stringify({ credential_configuration_id: configurationId, proofs: { jwt: [proof] } }),
    })
    const body = (await response.json()) as Json
    const [jwt, ...disclosures] = (body.credentials[0].credential as string).split('~')
    const claims: Record<string, unknown> = {}
    for (const d of disclosures.filter(Boolean)) {
      const [, name, value] = JSON.parse(Buffer.from(d, 'base64url').toString()) as [string, string, unknown]
      claims[name] = value
    }
    return {
      payload: JSON.parse(Buffer.from((jwt as string).split('.')[1] as string, 'base64url').toString()),
      claims,
    }
  }

  /** A wallet-initiated flow with login: PAR for `scope`, browser login, then the token. */
  async function loginFlow(scope: string) {
    const { verifier, challenge } = pkce()
    const pushed = await par({
      response_type: 'code',
      client_id: 'wallet-1',
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope,
      state: 'login-state',
    })
    const start = `${issuer()}/authorize?${new URLSearchParams({ client_id: 'wallet-1', request_uri: pushed.body.request_uri })}`
    const back = await browse(start, REDIRECT, loginAsAlice)
    expect(back.searchParams.get('iss')).toBe(issuer())
    expect(back.searchParams.get('state')).toBe('login-state')
    return token({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') as string,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: 'wallet-1',
    })
  }

  it('RFC 8414 / HAIP 4 (I-14): AS metadata lists PAR, authorize, S256, iss and the grants', async () => {
    const metadata = (await (
      await fetch(`${baseUrl}/.well-known/oauth-authorization-server/issuers/${tenant}`)
    ).json()) as Json
    expect(metadata).toMatchObject({
      issuer: issuer(),
      authorization_endpoint: `${issuer()}/authorize`,
      pushed_authorization_request_endpoint: `${issuer()}/par`,
      require_pushed_authorization_requests: true,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      response_types_supported: ['code'],
    })
    expect(metadata.grant_types_supported).toEqual(
      expect.arrayContaining(['authorization_code', 'refresh_token']),
    )
  })

  it('OpenID4VCI §5 (I-25, I-26, I-35): the oid4vc-ts wallet runs PAR, PKCE, code and credential from an offer', async () => {
    const created = await offer()
    expect(created.credentialOffer.grants.authorization_code.issuer_state).toEqual(expect.any(String))
    const { wallet, publicJwk } = await walletFor()
    const credentialOffer = await wallet.resolveCredentialOffer(created.offerUri)
    const issuerMetadata = await wallet.resolveIssuerMetadata(credentialOffer.credential_issuer)
    const started = await wallet.initiateAuthorization({
      clientId: 'wallet-1',
      issuerMetadata,
      credentialOffer,
      redirectUri: REDIRECT,
      scope: 'pid',
    })
    if (started.authorizationFlow !== 'Oauth2Redirect') throw new Error('expected a redirect flow')
    expect(started.authorizationRequestUrl).toContain('request_uri=')
    const location = (await fetch(started.authorizationRequestUrl, { redirect: 'manual' })).headers.get(
      'location',
    )
    const response = wallet.parseAndVerifyAuthorizationResponseRedirectUrl({
      url: location as string,
      authorizationServerMetadata: issuerMetadata.authorizationServers[0] as never,
    })
    expect(response.iss).toBe(issuer())
    const { accessTokenResponse } = await wallet.retrieveAuthorizationCodeAccessTokenFromOffer({
      issuerMetadata,
      credentialOffer,
      authorizationCode: response.code as string,
      pkceCodeVerifier: started.pkce?.codeVerifier as string,
      redirectUri: REDIRECT,
    })
    expect(accessTokenResponse.refresh_token).toEqual(expect.any(String))
    const { c_nonce } = await wallet.requestNonce({ issuerMetadata })
    const { jwt } = await wallet.createCredentialRequestJwtProof({
      issuerMetadata,
      credentialConfigurationId: 'pid',
      nonce: c_nonce,
      signer: { method: 'jwk', alg: 'ES256', publicJwk: publicJwk as never },
    })
    const result = await wallet.retrieveCredentials({
      issuerMetadata,
      accessToken: accessTokenResponse.access_token,
      credentialConfigurationId: 'pid',
      proofs: { jwt: [jwt] },
    })
    const issued = (result.credentialResponse.credentials as { credential: string }[])[0]
      ?.credential as string
    const payload = JSON.parse(Buffer.from(issued.split('.')[1] as string, 'base64url').toString()) as Json
    expect(payload.vct).toBe('urn:eudi:pid:1')
  })

  it('OpenID4VCI §6.2, §8.2 (I-44, I-62): authorization_details gives credential_identifiers, the credential endpoint takes them', async () => {
    const created = await offer({ byReference: false })
    const issuerState = created.credentialOffer.grants.authorization_code.issuer_state
    const details = JSON.stringify([{ type: 'openid_credential', credential_configuration_id: 'pid' }])
    const { code, verifier } = await codeFor(issuerState, { scope: '', authorization_details: details })
    const answer = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: 'wallet-1',
    })
    expect(answer.status).toBe(200)
    expect(answer.body.authorization_details).toStrictEqual([
      { type: 'openid_credential', credential_configuration_id: 'pid', credential_identifiers: ['pid'] },
    ])
    const credential = (body: unknown) =>
      fetch(`${issuer()}/credential`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${answer.body.access_token}` },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Json }))
    expect((await credential({ credential_configuration_id: 'pid' })).body.error).toBe(
      'invalid_credential_request',
    )
    expect((await credential({ credential_identifier: 'other' })).body.error).toBe(
      'unknown_credential_identifier',
    )
    // A known identifier passes the identifier check and reaches the proof check.
    expect((await credential({ credential_identifier: 'pid' })).body.error).toBe('invalid_proof')
  })

  it('RFC 9126 §2 (I-30, I-31, I-34, I-36, I-37, S-36, S-38): PAR refuses GET, a JSON body, request_uri, plain or missing PKCE, bad redirect_uri, response_type=token', async () => {
    const get = await fetch(`${issuer()}/par`)
    expect(get.status).toBe(405)
    const { challenge } = pkce()
    const good = {
      response_type: 'code',
      client_id: 'wallet-1',
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: 'staff unknown-scope',
    }
    const ok = await par(good)
    expect(ok.status).toBe(201)
    expect(ok.headers.get('cache-control')).toBe('no-store')
    expect(ok.body.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:/)
    expect(ok.body.expires_in).toBeGreaterThan(0)
    // RFC 9126 §2.1: the request is form-encoded; the same parameters as JSON are refused.
    for (const type of ['application/json', 'text/plain']) {
      const other = await fetch(`${issuer()}/par`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: JSON.stringify(good),
      })
      expect(other.status, type).toBe(400)
      expect(((await other.json()) as Json).error, type).toBe('invalid_request')
    }
    const error = async (params: Record<string, string>) => (await par(params)).body.error
    expect(await error({ ...good, request_uri: 'urn:x' })).toBe('invalid_request')
    expect(await error({ ...good, code_challenge_method: 'plain' })).toBe('invalid_request')
    const { code_challenge: _c, ...noChallenge } = good
    expect(await error(noChallenge)).toBe('invalid_request')
    const { redirect_uri: _r, ...noRedirect } = good
    expect(await error(noRedirect)).toBe('invalid_request')
    expect(await error({ ...good, redirect_uri: 'javascript:alert(1)' })).toBe('invalid_request')
    expect(await error({ ...good, response_type: 'token' })).toBe('unsupported_response_type')
    expect(await error({ ...good, scope: 'unknown-scope' })).toBe('invalid_scope')
  })

  it('OpenID4VCI §5.1.3 (I-39): unknown PAR parameters are ignored; the flow gives a code', async () => {
    const issuerState = (await offer()).credentialOffer.grants.authorization_code.issuer_state
    const flow = await codeFor(issuerState, { random_field: 'x', 'vendor:extension': '{"a":1}' })
    expect(flow.code).toEqual(expect.any(String))
  })

  it('PAR §4, §7.3 (I-32, I-33, S-37): request_uri is single-use, bound to client_id; plain requests refused; errors never redirect', async () => {
    const { challenge } = pkce()
    const pushed = await par(
      pushedParams(challenge, {
        issuer_state: (await offer()).credentialOffer.grants.authorization_code.issuer_state,
      }),
    )
    const other = await authorize('wallet-2', pushed.body.request_uri)
    expect(other.status).toBe(400)
    expect(other.headers.get('location')).toBeNull()
    const first = await authorize('wallet-1', pushed.body.request_uri)
    expect(first.status).toBe(303)
    const again = await authorize('wallet-1', pushed.body.request_uri)
    expect(again.status).toBe(400)
    expect(((await again.json()) as Json).error).toBe('invalid_request')
    const plain = await fetch(
      `${issuer()}/authorize?${new URLSearchParams({ client_id: 'wallet-1', response_type: 'code', redirect_uri: REDIRECT })}`,
      { redirect: 'manual' },
    )
    expect(plain.status).toBe(400)
    expect(plain.headers.get('location')).toBeNull()
  })

  it('RFC 9207, VCI 4.1.1 (I-36, S-39): the code comes back with state and iss; a forged issuer_state grants nothing', async () => {
    const { location } = await codeFor((await offer()).credentialOffer.grants.authorization_code.issuer_state)
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT)
    expect(location.searchParams.get('state')).toBe('st-1')
    expect(location.searchParams.get('iss')).toBe(issuer())
    // Without a valid offer, `pid` (no holder login) is refused at PAR: no request_uri, nothing to redirect.
    const forged = await par(pushedParams(pkce().challenge, { issuer_state: 'forged-issuer-state' }))
    expect(forged.status).toBe(400)
    expect(forged.body.error).toBe('invalid_scope')
    expect(forged.body.request_uri).toBeUndefined()
  })

  it('RFC 6749 §4.1.3, PKCE §4.6 (I-40, S-35, S-36): code bound to client, redirect_uri, verifier; reuse revokes', async () => {
    // The offer's session: the token request checks the code's bindings in the statement that
    // issues the session's token, so a refused binding must leave the session offered.
    let sessionId = ''
    const state = () =>
      offer().then((o) => {
        sessionId = o.sessionId as string
        return o.credentialOffer.grants.authorization_code.issuer_state as string
      })
    const sessionStatus = async () =>
      ((await (await fetch(`${baseUrl}/api/sessions/${sessionId}`, { headers: admin })).json()) as Json)
        .status
    const base = (code: string, verifier: string) => ({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: 'wallet-1',
    })
    let flow = await codeFor(await state())
    expect((await token({ ...base(flow.code, flow.verifier), client_id: 'wallet-2' })).body.error).toBe(
      'invalid_grant',
    )
    expect(await sessionStatus()).toBe('offered')
    flow = await codeFor(await state())
    expect(
      (await token({ ...base(flow.code, flow.verifier), redirect_uri: `${REDIRECT}/x` })).body.error,
    ).toBe('invalid_grant')
    expect(await sessionStatus()).toBe('offered')
    flow = await codeFor(await state())
    expect((await token(base(flow.code, pkce().verifier))).body.error).toBe('invalid_grant')
    expect(await sessionStatus()).toBe('offered')
    // A verifier that is not one (RFC 7636 §4.1: 43-128 unreserved characters) is refused the same way.
    flow = await codeFor(await state())
    expect((await token(base(flow.code, `${flow.verifier}!`))).body.error).toBe('invalid_grant')
    expect(await sessionStatus()).toBe('offered')
    flow = await codeFor(await state())
    const { code_verifier: _v, ...noVerifier } = base(flow.code, flow.verifier)
    expect((await token(noVerifier)).body.error).toBe('invalid_request')
    // §4.1.3: "redirect_uri REQUIRED, if the redirect_uri parameter was included in the authorization
    // request": without it the request is refused and the code is not spent.
    flow = await codeFor(await state())
    const { redirect_uri: _r, ...noRedirect } = base(flow.code, flow.verifier)
    const omitted = await token(noRedirect)
    expect([omitted.status, omitted.body.error]).toStrictEqual([400, 'invalid_request'])
    expect((await token(base(flow.code, flow.verifier))).status).toBe(200)

    flow = await codeFor(await state())
    const first = await token(base(flow.code, flow.verifier))
    expect(first.status).toBe(200)
    expect(first.body.token_type).toBe('Bearer')
    expect(await sessionStatus()).toBe('token_issued')
    const second = await token(base(flow.code, flow.verifier))
    expect(second.body.error).toBe('invalid_grant')
    // The reuse revoked the grant: the first access token and refresh token no longer work.
    const credential = await fetch(`${issuer()}/credential`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${first.body.access_token}` },
      body: JSON.stringify({ credential_configuration_id: 'pid' }),
    })
    expect(credential.status).toBe(401)
    expect(
      (
        await token({
          grant_type: 'refresh_token',
          refresh_token: first.body.refresh_token,
          client_id: 'wallet-1',
        })
      ).body.error,
    ).toBe('invalid_grant')
  })
  // The refresh token grant: refresh-token.test.ts.

  it('OpenID4VCI §5 with upstream OIDC login (wallet-initiated): the holder logs in, ID token/userinfo claims fill the credential', async () => {
    const answer = await loginFlow('staff')
    expect(answer.status).toBe(200)
    expect(answer.body.refresh_token).toBeUndefined()
    const { payload, claims } = await requestCredential(answer.body.access_token, 'staff')
    expect(payload.vct).toBe('urn:example:staff')
    expect(claims).toStrictEqual({ given_name: 'Given-alice', family_name: 'Mustermann' })
  })

  it('S-129 RFC 9901 §4.2: a login claim holding _sd is refused before signing: access_denied naming the path, no code', async () => {
    const { challenge } = pkce()
    const pushed = await par(pushedParams(challenge, { scope: 'resident', state: 'forged' }))
    const start = `${issuer()}/authorize?${new URLSearchParams({ client_id: 'wallet-1', request_uri: pushed.body.request_uri })}`
    const back = await browse(start, REDIRECT, loginAsAlice)
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(back.searchParams.get('error_description')).toBe(
      "claims of 'resident' failed validation: claims.address._sd '_sd' is an SD-JWT structure name (RFC 9901 §4.2); claims cannot use it",
    )
    expect(back.searchParams.get('code')).toBeNull()
  })

  it('OpenID4VCI §5 with login and an attribute provider: the provider is asked with the user, and its answer wins', async () => {
    const answer = await loginFlow('employee')
    expect(answer.status).toBe(200)
    const call = attributeCalls.at(-1)
    expect(call.credentialConfigurationId).toBe('employee')
    // Issue 19 item 9 (data minimisation): the user's claims only, none of the ID token's
    // protocol claims (OIDC Core §2: iss, aud, exp, iat, nonce, auth_time, at_hash, sid, …).
    expect(call.user).toStrictEqual({
      issuer: upstreamUrl,
      sub: 'alice',
      claims: { given_name: 'Given-alice', family_name: 'Mustermann' },
    })
    const { claims } = await requestCredential(answer.body.access_token, 'employee')
    expect(claims).toStrictEqual({ given_name: 'Given-alice', family_name: 'Registry-alice' })
  })

  it('OpenID4VCI §5, §9 (I-67, I-73): a provider not ready after the login (HTTP 202) defers the credential; asked again by session id, its answer is issued over the login claims', async () => {
    pendingAnswers = 2 // at the login, and at the first credential request
    const answer = await loginFlow('employee')
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    const proof = await freshProof()
    const headers = {
      'content-type': 'application/json',
      authorization: `Bearer ${answer.body.access_token}`,
    }
    const first = await fetch(`${issuer()}/credential`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ credential_configuration_id: 'employee', proofs: { jwt: [proof] } }),
    })
    expect(first.status).toBe(202)
    const { transaction_id } = (await first.json()) as Json
    expect(transaction_id).toEqual(expect.any(String))
    // The provider is asked again once the interval (1 s) has passed.
    await new Promise((resolve) => setTimeout(resolve, 1150))
    const later = await fetch(`${issuer()}/deferred-credential`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ transaction_id }),
    })
    const body = (await later.json()) as Json
    expect(later.status, JSON.stringify(body)).toBe(200)
    const disclosed = (body.credentials[0].credential as string)
      .split('~')
      .slice(1)
      .filter(Boolean)
      .map((d) => JSON.parse(Buffer.from(d, 'base64url').toString()) as [string, string, unknown])
    // The provider's later answer (by session id), over the claims of the login.
    expect(Object.fromEntries(disclosed.map(([, name, value]) => [name, value]))).toStrictEqual({
      given_name: 'Given-alice',
      family_name: 'Registry-alice',
    })
  })

  it('OpenID4VCI §4.1.1 (I-26): an offer with both grants carries issuer_state and the pre-authorized code, by reference too', async () => {
    const created = await offer({ grant: 'both' })
    const served = (await (await fetch(created.credentialOfferUri)).json()) as Json
    expect(Object.keys(served.grants).sort()).toStrictEqual([
      'authorization_code',
      'urn:ietf:params:oauth:grant-type:pre-authorized_code',
    ])
    expect(served.grants.authorization_code.issuer_state).toBe(
      created.credentialOffer.grants.authorization_code.issuer_state,
    )
    // Redeeming one grant closes the other: the authorization code flow takes the session.
    const flow = await codeFor(served.grants.authorization_code.issuer_state)
    expect(
      (
        await token({
          grant_type: 'authorization_code',
          code: flow.code,
          code_verifier: flow.verifier,
          redirect_uri: REDIRECT,
          client_id: 'wallet-1',
        })
      ).status,
    ).toBe(200)
    const preAuthorized = await token({
      grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
      'pre-authorized_code':
        served.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code'],
    })
    expect(preAuthorized.body.error).toBe('invalid_grant')
  })

  it('OpenID4VCI §5 (I-25): an offer for a configuration with userAuthentication takes no claims and still logs the holder in; the login claims are issued', async () => {
    // Inline claims for it would never be issued: the management API refuses them.
    const refused = await post('/api/offers', {
      credentialConfigurationIds: ['staff'],
      grant: 'authorization_code',
      claims: { staff: { given_name: 'Offered' } },
    })
    expect(refused.status).toBe(422)
    const created = await offer({ credentialConfigurationIds: ['staff'], claims: undefined })
    const { verifier, challenge } = pkce()
    const pushed = await par(
      pushedParams(challenge, {
        scope: 'staff',
        issuer_state: created.credentialOffer.grants.authorization_code.issuer_state,
      }),
    )
    const start = `${issuer()}/authorize?${new URLSearchParams({ client_id: 'wallet-1', request_uri: pushed.body.request_uri })}`
    const back = await browse(start, REDIRECT, loginAsAlice)
    const answer = await token({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') as string,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: 'wallet-1',
    })
    expect(answer.status).toBe(200)
    const { claims } = await requestCredential(answer.body.access_token, 'staff')
    expect(claims).toStrictEqual({ given_name: 'Given-alice', family_name: 'Mustermann' })
    const session = (await (
      await fetch(`${baseUrl}/api/sessions/${created.sessionId}`, { headers: admin })
    ).json()) as Json
    expect(session.status).toBe('completed')
  })

  it('DPoP §10 (I-38): a code pushed with dpop_jkt is refused without that key (invalid_dpop_proof)', async () => {
    const offered = await offer()
    const issuerState = offered.credentialOffer.grants.authorization_code.issuer_state
    const flow = await codeFor(issuerState, { dpop_jkt: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs' })
    const answer = await token({
      grant_type: 'authorization_code',
      code: flow.code,
      code_verifier: flow.verifier,
      redirect_uri: REDIRECT,
      client_id: 'wallet-1',
    })
    expect(answer.body.error).toBe('invalid_dpop_proof')
    // The binding is checked in the statement that would issue the session's token: none issued.
    const session = (await (
      await fetch(`${baseUrl}/api/sessions/${offered.sessionId}`, { headers: admin })
    ).json()) as Json
    expect(session.status).toBe('offered')
  })

  it('RFC 6749 §4.1.2, PAR §7.3 (I-32, I-40, S-35, S-37): expired request_uri and expired code are refused', async () => {
    const { challenge } = pkce()
    const pushed = await par(
      pushedParams(challenge, {
        issuer_state: (await offer()).credentialOffer.grants.authorization_code.issuer_state,
      }),
    )
    skewMs = 61_000
    try {
      expect((await authorize('wallet-1', pushed.body.request_uri)).status).toBe(400)
    } finally {
      skewMs = 0
    }
    const flow = await codeFor((await offer()).credentialOffer.grants.authorization_code.issuer_state)
    skewMs = 61_000
    try {
      const answer = await token({
        grant_type: 'authorization_code',
        code: flow.code,
        code_verifier: flow.verifier,
        redirect_uri: REDIRECT,
        client_id: 'wallet-1',
      })
      expect(answer.body.error).toBe('invalid_grant')
    } finally {
      skewMs = 0
    }
  })

  it('OIDC Core §3.1.2.6 (I-36): the holder refusing at the provider gives access_denied with state and iss', async () => {
    const { challenge } = pkce()
    const pushed = await par(
      pushedParams(challenge, {
        scope: 'staff',
        state: 'refuse',
      }),
    )
    const start = `${issuer()}/authorize?${new URLSearchParams({ client_id: 'wallet-1', request_uri: pushed.body.request_uri })}`
    const back = await browse(start, REDIRECT, async (url, cookie) => {
      const interaction = /\/interaction\/([^/?]+)$/.exec(new URL(url).pathname)
      if (!url.startsWith(upstreamUrl) || !interaction) return undefined
      return fetch(`${url}/abort`, { redirect: 'manual', headers: { cookie } })
    })
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(back.searchParams.get('state')).toBe('refuse')
    expect(back.searchParams.get('iss')).toBe(issuer())
    expect(back.searchParams.get('code')).toBeNull()
  })

  /** The /authorize URL of a pushed request of wallet-1. */
  const authorizeUrl = (requestUri: string, at = issuer()) =>
    `${at}/authorize?${new URLSearchParams({ client_id: 'wallet-1', request_uri: requestUri })}`
  const issuerStateOf = async (body: Record<string, unknown> = {}) =>
    (await offer(body)).credentialOffer.grants.authorization_code.issuer_state as string
  const redeem = (flow: { code: string; verifier: string }) =>
    token({
      grant_type: 'authorization_code',
      code: flow.code,
      code_verifier: flow.verifier,
      redirect_uri: REDIRECT,
      client_id: 'wallet-1',
    })

  it('RFC 9700 §4.11.2, OpenID4VCI §5 (I-25, S-38): without an offer, configurations without holder login are refused at PAR (invalid_scope, no request_uri), also next to one with login', async () => {
    const { challenge } = pkce()
    const details = JSON.stringify([{ type: 'openid_credential', credential_configuration_id: 'pid' }])
    const requests: Record<string, string>[] = [
      { scope: 'pid' },
      { scope: 'pid staff' },
      { scope: '', authorization_details: details },
    ]
    for (const extra of requests) {
      const refused = await par(pushedParams(challenge, extra))
      expect(refused.status, JSON.stringify(extra)).toBe(400)
      expect(refused.body.error, JSON.stringify(extra)).toBe('invalid_scope')
      expect(refused.body.request_uri).toBeUndefined()
    }
  })

  it('OIDC Core §3.1.2.1, RFC 6749 §10.12 (I-36): the login is asked with prompt=login and bound to the browser by an HttpOnly, Secure, SameSite=Lax cookie on the issuer path', async () => {
    const pushed = await par(pushedParams(pkce().challenge, { scope: 'staff' }))
    const started = await authorize('wallet-1', pushed.body.request_uri)
    expect(started.status).toBe(303)
    const login = new URL(started.headers.get('location') as string)
    expect(login.origin).toBe(upstreamUrl)
    expect(login.searchParams.get('prompt')).toBe('login')
    const [cookie, ...more] = started.headers.getSetCookie()
    expect(more).toStrictEqual([])
    expect(cookie).toMatch(/^authz_login=[A-Za-z0-9_-]{43}; /)
    expect((cookie as string).split('; ').slice(1)).toEqual(
      expect.arrayContaining([`Path=/issuers/${tenant}`, 'HttpOnly', 'Secure', 'SameSite=Lax']),
    )
  })

  it('RFC 6749 §10.12, OIDC Core §3.1.2.7 (I-36, S-38): a login finished in another browser, a replayed and an unknown callback state give an error page and no code', async () => {
    const pushed = await par(pushedParams(pkce().challenge, { scope: 'staff', state: 'lured' }))
    const started = await authorize('wallet-1', pushed.body.request_uri)
    const starter: Jar = new Map()
    keep(starter, started)
    // The login page is sent to a victim, who logs in with a browser that has its own cookie.
    const victim: Jar = new Map([['authz_login', 'v'.repeat(43)]])
    const callback = await browse(
      started.headers.get('location') as string,
      `${issuer()}/authorize/callback`,
      loginAs('victim'),
      victim,
    )
    const lured = await fetch(callback, { redirect: 'manual', headers: { cookie: cookieOf(victim) } })
    expect(lured.status).toBe(400)
    expect(lured.headers.get('location')).toBeNull()
    expect(((await lured.json()) as Json).error).toBe('invalid_request')
    // The login state is spent: not even the browser that started it gets a code with it.
    const late = await fetch(callback, { redirect: 'manual', headers: { cookie: cookieOf(starter) } })
    expect(late.status).toBe(400)
    expect(late.headers.get('location')).toBeNull()

    // A completed login's callback, replayed from its own browser; then an unknown state.
    const jar: Jar = new Map()
    const second = await par(pushedParams(pkce().challenge, { scope: 'staff' }))
    const back = await browse(
      authorizeUrl(second.body.request_uri),
      `${issuer()}/authorize/callback`,
      loginAsAlice,
      jar,
    )
    const done = await fetch(back, { redirect: 'manual', headers: { cookie: cookieOf(jar) } })
    expect(new URL(done.headers.get('location') as string).searchParams.get('code')).toEqual(
      expect.any(String),
    )
    const replayed = await fetch(back, { redirect: 'manual', headers: { cookie: cookieOf(jar) } })
    expect(replayed.status).toBe(400)
    expect(replayed.headers.get('location')).toBeNull()
    const unknown = new URL(back)
    unknown.searchParams.set('state', 'unknown-state')
    const guessed = await fetch(unknown, { redirect: 'manual', headers: { cookie: cookieOf(jar) } })
    expect(guessed.status).toBe(400)
    expect(guessed.headers.get('location')).toBeNull()
  })

  it('PAR §4 (I-32): reloading /authorize before the login completed restarts the login in the same browser; another browser cannot, nor anyone once the code is out', async () => {
    const { verifier, challenge } = pkce()
    const pushed = await par(pushedParams(challenge, { scope: 'staff', state: 'reload' }))
    const url = authorizeUrl(pushed.body.request_uri)
    const jar: Jar = new Map()
    const first = await fetch(url, { redirect: 'manual' })
    expect(first.status).toBe(303)
    keep(jar, first)
    const elsewhere = await fetch(url, { redirect: 'manual' })
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.headers.get('location')).toBeNull()
    const reload = await fetch(url, { redirect: 'manual', headers: { cookie: cookieOf(jar) } })
    expect(reload.status).toBe(303)
    const stateOf = (response: Response) =>
      new URL(response.headers.get('location') as string).searchParams.get('state')
    expect(stateOf(reload)).not.toBe(stateOf(first))
    const back = await browse(reload.headers.get('location') as string, REDIRECT, loginAsAlice, jar)
    expect(back.searchParams.get('state')).toBe('reload')
    const answer = await redeem({ code: back.searchParams.get('code') as string, verifier })
    expect(answer.status).toBe(200)
    const after = await fetch(url, { redirect: 'manual', headers: { cookie: cookieOf(jar) } })
    expect(after.status).toBe(400)
  })

  it("OpenID4VCI §5 (I-25): two wallets log in on one offer; the first to redeem gets its own holder's claims only, the other is refused", async () => {
    // A login-backed configuration is offered without claims: they come from each holder's login.
    const issuerState = await issuerStateOf({ credentialConfigurationIds: ['staff'], claims: {} })
    const loginOn = async (user: string) => {
      const { verifier, challenge } = pkce()
      const pushed = await par(pushedParams(challenge, { scope: 'staff', issuer_state: issuerState }))
      const back = await browse(authorizeUrl(pushed.body.request_uri), REDIRECT, loginAs(user))
      return { code: back.searchParams.get('code') as string, verifier }
    }
    const alice = await loginOn('alice')
    const bob = await loginOn('bob') // logs in last
    const first = await redeem(alice)
    expect(first.status).toBe(200)
    const { claims } = await requestCredential(first.body.access_token, 'staff')
    expect(claims).toStrictEqual({ given_name: 'Given-alice', family_name: 'Mustermann' })
    const second = await redeem(bob)
    expect(second.body.error).toBe('invalid_grant')
  })

  it('OpenID4VCI §5 (I-35): configurations logging in at different login providers are refused together at PAR (invalid_scope)', async () => {
    const refused = await par(pushedParams(pkce().challenge, { scope: 'staff badge' }))
    expect(refused.status).toBe(400)
    expect(refused.body.error).toBe('invalid_scope')
    expect((await par(pushedParams(pkce().challenge, { scope: 'staff employee' }))).status).toBe(201)
    expect((await par(pushedParams(pkce().challenge, { scope: 'badge' }))).status).toBe(201)
  })

  it('OpenID4VCI §5.1.1-5.1.2 (I-35, I-44): scope and authorization_details naming the same configuration: authorization_details wins', async () => {
    const details = JSON.stringify([{ type: 'openid_credential', credential_configuration_id: 'pid' }])
    const flow = await codeFor(await issuerStateOf(), { scope: 'pid', authorization_details: details })
    const answer = await redeem(flow)
    expect(answer.status).toBe(200)
    expect(answer.body.authorization_details).toStrictEqual([
      { type: 'openid_credential', credential_configuration_id: 'pid', credential_identifiers: ['pid'] },
    ])
    const byConfiguration = await fetch(`${issuer()}/credential`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${answer.body.access_token}` },
      body: JSON.stringify({ credential_configuration_id: 'pid', proofs: { jwt: [await freshProof()] } }),
    })
    expect(((await byConfiguration.json()) as Json).error).toBe('invalid_credential_request')
  })

  it('RFC 6749 §4.1.2, BCP 4.5 (I-40, S-35): two concurrent redemptions of one code give exactly one access token', async () => {
    const flow = await codeFor(await issuerStateOf())
    const answers = await Promise.all([redeem(flow), redeem(flow)])
    expect(answers.map((a) => a.status).sort()).toStrictEqual([200, 400])
    expect(answers.find((a) => a.status === 400)?.body.error).toBe('invalid_grant')
  })

  it('S-103: a request_uri, an authorization code and an issuer_state of one tenant are refused at another', async () => {
    const other = `${baseUrl}/issuers/${otherTenant}`
    const { verifier, challenge } = pkce()
    const pushed = await par(pushedParams(challenge, { issuer_state: await issuerStateOf() }))
    const atOther = await fetch(authorizeUrl(pushed.body.request_uri, other), { redirect: 'manual' })
    expect(atOther.status).toBe(400)
    expect(atOther.headers.get('location')).toBeNull()
    // Still the issuing tenant's to use.
    const location = new URL(
      (await authorize('wallet-1', pushed.body.request_uri)).headers.get('location') as string,
    )
    const code = location.searchParams.get('code') as string
    expect(code).toEqual(expect.any(String))
    const tokenAtOther = await fetch(`${other}/token`, {
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
    expect(((await tokenAtOther.json()) as Json).error).toBe('invalid_grant')
    expect((await redeem({ code, verifier })).status).toBe(200)
    // The other tenant knows no such offer: its `pid` needs one, so the request is refused.
    const parAtOther = await fetch(`${other}/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(
        pushedParams(pkce().challenge, { issuer_state: await issuerStateOf() }),
      ).toString(),
    })
    expect(parAtOther.status).toBe(400)
    expect(((await parAtOther.json()) as Json).error).toBe('invalid_scope')
  })
})
