import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import type { FastifyInstance } from 'fastify'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type ExternalAs,
  type ExternalWallet,
  externalWallet,
  INTROSPECTION_CLIENT,
  startExternalAs,
} from './external-as-fixtures'
import { freePort } from './free-port'
import { startAllInOneWorld } from './harness'
import { holderProof } from './wallet'

// biome-ignore lint/suspicious/noExplicitAny: tests read loosely typed JSON answers
type Json = any

/** The disclosed claims of an SD-JWT VC (RFC 9901 §4.2: each disclosure is [salt, name, value]). */
function disclosed(credential: string): Record<string, unknown> {
  const [, ...disclosures] = credential.split('~').filter(Boolean)
  return Object.fromEntries(
    disclosures.map((d) => {
      const [, name, value] = JSON.parse(Buffer.from(d, 'base64url').toString('utf8')) as [
        string,
        string,
        unknown,
      ]
      return [name, value]
    }),
  )
}

/**
 * Issue 41: a tenant's credential issuer accepts access tokens of an external OAuth server
 * (OpenID4VCI 1.0 §12.2.4 `authorization_servers`). The server is a real oidc-provider (PAR, PKCE,
 * DPoP, RAR, resource indicators, RFC 9068 JWT access tokens; a second one with RFC 7662
 * introspection); the wallet walks the flow from the spec text (external-as-fixtures.ts).
 */
describe('OpenID4VCI 1.0 §12.2.4: tokens of an external authorization server', () => {
  let app: FastifyInstance
  let baseUrl: string
  let jwtAs: ExternalAs
  let opaqueAs: ExternalAs
  let admin: Record<string, string>
  let otherAdmin: Record<string, string>
  let tenant: string
  let otherTenant: string
  let skewMs = 0
  const issuer = () => `${baseUrl}/issuers/${tenant}`
  const subjectClaims = (sub: string) => ({ given_name: `Given-${sub}`, family_name: 'External' })

  const api = async (method: string, url: string, body?: unknown) => {
    const response = await app.inject({
      method: method as 'POST',
      url,
      headers: admin,
      ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
    })
    return { status: response.statusCode, body: (response.body ? response.json() : undefined) as Json }
  }

  /** The credential endpoint with the token as `DPoP` (and a proof of `key`) or Bearer. */
  async function credentialRequest(
    wallet: ExternalWallet,
    accessToken: string,
    body: Record<string, unknown>,
    options: { bearer?: boolean; key?: Awaited<ReturnType<typeof generateKeyPair>>; at?: string } = {},
  ) {
    const target = options.at ?? issuer()
    // The nonce endpoint gives the c_nonce and, as this issuer requires one, the DPoP nonce (RFC 9449 §8).
    const nonces = await fetch(`${target}/nonce`, { method: 'POST' })
    const { c_nonce } = (await nonces.json()) as Json
    const { proof } = await holderProof(target, c_nonce)
    const dpopNonce = nonces.headers.get('dpop-nonce') ?? undefined
    const headers: Record<string, string> = options.bearer
      ? { authorization: `Bearer ${accessToken}` }
      : {
          authorization: `DPoP ${accessToken}`,
          dpop: await wallet.dpopProof('POST', `${target}/credential`, accessToken, options.key, dpopNonce),
        }
    const response = await fetch(`${target}/credential`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ ...body, proofs: { jwt: [proof] } }),
    })
    return {
      status: response.status,
      challenge: response.headers.get('www-authenticate'),
      body: (await response.json()) as Json,
    }
  }

  beforeAll(async () => {
    const port = await freePort()
    baseUrl = `http://127.0.0.1:${port}`
    // The servers listen first: the world's auth-servers/as.json names the JWT one's URL.
    jwtAs = await startExternalAs({ resource: issuer, format: 'jwt', subjectClaims })
    opaqueAs = await startExternalAs({ resource: issuer, format: 'opaque', subjectClaims })
    const started = await startAllInOneWorld(
      testDatabases().at(-1) as TestDatabase,
      'external-as',
      baseUrl,
      { OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', AS_URL: jwtAs.url },
      () => new Date(Date.now() + skewMs),
    )
    app = started.app
    await app.listen({ host: '127.0.0.1', port })
    tenant = started.tenants.a.id
    otherTenant = started.tenants.b.id
    admin = started.tenants.a.auth
    otherAdmin = started.tenants.b.auth
  })
  afterAll(async () => {
    await app?.close()
    await jwtAs?.close()
    await opaqueAs?.close()
  })

  it('config import auth-servers/: the imported server is listed, after the issuer, in authorization_servers (§12.2.4); another tenant lists none', async () => {
    const listed = await api('GET', '/api/auth-servers')
    expect(listed.status).toBe(200)
    expect(listed.body.items).toStrictEqual([
      expect.objectContaining({
        id: 'as',
        issuer: jwtAs.url,
        tokenCheck: 'jwt',
        credentialConfigurationIds: ['pid'],
        mapping: ['authorization_details', 'scope'],
        claimsSource: 'token',
        singleUseTokens: false,
        hasClientSecret: false,
      }),
    ])
    const metadata = (await (
      await fetch(`${baseUrl}/.well-known/openid-credential-issuer/issuers/${tenant}`)
    ).json()) as Json
    expect(metadata.authorization_servers).toStrictEqual([issuer(), jwtAs.url])
    const other = (await (
      await fetch(`${baseUrl}/.well-known/openid-credential-issuer/issuers/${otherTenant}`)
    ).json()) as Json
    expect(other).not.toHaveProperty('authorization_servers')
  })

  it('§4.1.1 (I-25): with several servers listed, each grant names its authorization_server; an unknown server is a 422', async () => {
    const offer = await api('POST', '/api/offers', {
      credentialConfigurationIds: ['pid'],
      grant: 'both',
      authorizationServerId: 'as',
      claims: { pid: { given_name: 'Offer' } },
      byReference: false,
    })
    expect(offer.status, JSON.stringify(offer.body)).toBe(201)
    expect(offer.body.credentialOffer.grants.authorization_code.authorization_server).toBe(jwtAs.url)
    expect(
      offer.body.credentialOffer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']
        .authorization_server,
    ).toBe(issuer())
    // By reference: the same grants, served by the issuer.
    const byReference = await api('POST', '/api/offers', {
      credentialConfigurationIds: ['pid'],
      grant: 'authorization_code',
      authorizationServerId: 'as',
      claims: { pid: { given_name: 'Offer' } },
    })
    const served = (await (await fetch(byReference.body.credentialOfferUri)).json()) as Json
    expect(served.grants.authorization_code.authorization_server).toBe(jwtAs.url)
    const unknown = await api('POST', '/api/offers', {
      credentialConfigurationIds: ['pid'],
      grant: 'authorization_code',
      authorizationServerId: 'nope',
      claims: { pid: { given_name: 'Offer' } },
    })
    expect(unknown.status).toBe(422)
    expect(unknown.body.errors).toStrictEqual([
      expect.objectContaining({ path: 'body.authorizationServerId' }),
    ])
  })

  it('RFC 9068 + RFC 9449 + RAR: a DPoP-bound JWT access token of the server gets a credential with the token claims, and its notification', async () => {
    const wallet = await externalWallet()
    const token = await wallet.authorize(issuer(), { configurationId: 'pid' })
    expect(token.token_type).toBe('DPoP')
    const answer = await credentialRequest(wallet, token.access_token, { credential_configuration_id: 'pid' })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(disclosed(answer.body.credentials[0].credential)).toMatchObject({
      given_name: 'Given-alice',
      family_name: 'External',
    })
    // The same token again (not single use): the notification endpoint (§11) takes it.
    const dpopNonce =
      (await fetch(`${issuer()}/nonce`, { method: 'POST' })).headers.get('dpop-nonce') ?? undefined
    const notified = await fetch(`${issuer()}/notification`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `DPoP ${token.access_token}`,
        dpop: await wallet.dpopProof(
          'POST',
          `${issuer()}/notification`,
          token.access_token,
          undefined,
          dpopNonce,
        ),
      },
      body: JSON.stringify({ notification_id: answer.body.notification_id, event: 'credential_accepted' }),
    })
    expect(notified.status).toBe(204)
  })

  it('§5.1.2: a token naming the configuration by scope gets it; a configuration the server may not authorise is 403 insufficient_scope (§8.3.1.1)', async () => {
    const wallet = await externalWallet()
    const token = await wallet.authorize(issuer(), { scope: 'pid badge' })
    const badge = await credentialRequest(wallet, token.access_token, {
      credential_configuration_id: 'badge',
    })
    expect(badge.status, JSON.stringify(badge.body)).toBe(403)
    expect(badge.body.error).toBe('insufficient_scope')
    const pid = await credentialRequest(wallet, token.access_token, { credential_configuration_id: 'pid' })
    expect(pid.status, JSON.stringify(pid.body)).toBe(200)
  })

  it('§4.1.1 issuer_state: the token of an offer issues the offer’s prepared claims, once; an unknown issuer_state grants nothing', async () => {
    const offer = await api('POST', '/api/offers', {
      credentialConfigurationIds: ['pid'],
      grant: 'authorization_code',
      authorizationServerId: 'as',
      claims: { pid: { given_name: 'Prepared', family_name: 'ByTheOffer' } },
      byReference: false,
    })
    const issuerState = offer.body.credentialOffer.grants.authorization_code.issuer_state as string
    const wallet = await externalWallet()
    const token = await wallet.authorize(issuer(), { configurationId: 'pid', issuerState })
    const answer = await credentialRequest(wallet, token.access_token, { credential_configuration_id: 'pid' })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(disclosed(answer.body.credentials[0].credential)).toMatchObject({
      given_name: 'Prepared',
      family_name: 'ByTheOffer',
    })
    const session = await api('GET', `/api/sessions/${offer.body.sessionId}`)
    expect(session.body.status).toBe('completed')
    // A second authorization on the same offer: the offer is redeemed, its token refused.
    const again = await externalWallet()
    const second = await again.authorize(issuer(), { configurationId: 'pid', issuerState })
    const refused = await credentialRequest(again, second.access_token, {
      credential_configuration_id: 'pid',
    })
    expect(refused.status).toBe(401)
    expect(refused.body.error).toBe('invalid_token')
    const unknown = await again.authorize(issuer(), { configurationId: 'pid', issuerState: 'not-an-offer' })
    const none = await credentialRequest(again, unknown.access_token, { credential_configuration_id: 'pid' })
    expect(none.status).toBe(401)
    expect(none.body.error).toBe('invalid_token')
  })

  it('refusals: another issuer, wrong audience, expired, DPoP key mismatch, bearer use of a bound token (RFC 6750 §3.1, RFC 9449 §7)', async () => {
    const wallet = await externalWallet()
    // Another issuer: a well-formed at+jwt by a server the tenant does not list.
    const stranger = await generateKeyPair('ES256')
    const forged = await new SignJWT({ scope: 'pid', client_id: 'wallet-1', sub: 'alice' })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'x' })
      .setIssuer('https://other-as.example')
      .setAudience(issuer())
      .setIssuedAt()
      .setExpirationTime('5m')
      .setJti('forged')
      .sign(stranger.privateKey)
    const other = await credentialRequest(
      wallet,
      forged,
      { credential_configuration_id: 'pid' },
      { bearer: true },
    )
    expect(other.status).toBe(401)
    expect(other.body.error).toBe('invalid_token')
    expect(other.challenge).toMatch(/^Bearer error="invalid_token"/)

    // Wrong audience: the server's token for another tenant's issuer.
    const otherIssuer = `${baseUrl}/issuers/${otherTenant}`
    const elsewhere = await wallet.authorize(issuer(), { configurationId: 'pid' })
    const forOther = await credentialRequest(
      wallet,
      elsewhere.access_token,
      { credential_configuration_id: 'pid' },
      { at: otherIssuer },
    )
    expect(forOther.status).toBe(401)
    expect(forOther.body.error).toBe('invalid_token')

    // DPoP key mismatch: the proof is by another key than cnf.jkt.
    const token = await wallet.authorize(issuer(), { configurationId: 'pid' })
    const mismatch = await credentialRequest(
      wallet,
      token.access_token,
      { credential_configuration_id: 'pid' },
      { key: await generateKeyPair('ES256') },
    )
    expect(mismatch.status).toBe(401)
    expect(mismatch.body.error).toBe('invalid_token')
    expect(mismatch.challenge).toMatch(/^DPoP error="invalid_token"/)
    const bearer = await credentialRequest(
      wallet,
      token.access_token,
      { credential_configuration_id: 'pid' },
      { bearer: true },
    )
    expect(bearer.status).toBe(401)

    // Expired: the service's clock past the token's exp.
    skewMs = 10 * 60 * 1000
    try {
      const expired = await credentialRequest(wallet, token.access_token, {
        credential_configuration_id: 'pid',
      })
      expect(expired.status).toBe(401)
      expect(expired.body.error).toBe('invalid_token')
    } finally {
      skewMs = 0
    }
    // The token itself was fine all along.
    const fine = await credentialRequest(wallet, token.access_token, { credential_configuration_id: 'pid' })
    expect(fine.status, JSON.stringify(fine.body)).toBe(200)
  })

  it('RFC 9068 §4: after the server rotates its key, the unknown kid fetches the JWKS again; a flood of unknown kids fetches it no more than once per cooldown', async () => {
    const wallet = await externalWallet()
    await credentialRequest(
      wallet,
      (await wallet.authorize(issuer(), { configurationId: 'pid' })).access_token,
      {
        credential_configuration_id: 'pid',
      },
    )
    await jwtAs.rotate()
    // Past the refresh cooldown of the first fetch (the service's clock).
    skewMs = 31_000
    const before = jwtAs.jwksFetches()
    const token = await wallet.authorize(issuer(), { configurationId: 'pid' })
    const answer = await credentialRequest(wallet, token.access_token, { credential_configuration_id: 'pid' })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(jwtAs.jwksFetches()).toBe(before + 1)
    // Tokens with kids the server never had: refused, and the JWKS is not fetched again.
    const stranger = await generateKeyPair('ES256')
    for (const kid of ['k1', 'k2', 'k3']) {
      const forged = await new SignJWT({ scope: 'pid', sub: 'alice', cnf: { jkt: await wallet.dpopJkt() } })
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid, jwk: await exportJWK(stranger.publicKey) })
        .setIssuer(jwtAs.url)
        .setAudience(issuer())
        .setIssuedAt()
        .setExpirationTime('5m')
        .setJti(kid)
        .sign(stranger.privateKey)
      const refused = await credentialRequest(wallet, forged, { credential_configuration_id: 'pid' })
      expect(refused.status).toBe(401)
    }
    expect(jwtAs.jwksFetches()).toBe(before + 1)
    skewMs = 0
  })

  it('RFC 7662: a server checked by introspection (created through the API, secret never returned) issues; the answer is cached for the token', async () => {
    const created = await api('POST', '/api/auth-servers', {
      id: 'bank',
      issuer: opaqueAs.url,
      tokenCheck: 'introspection',
      clientId: INTROSPECTION_CLIENT.id,
      clientSecret: INTROSPECTION_CLIENT.secret,
      credentialConfigurationIds: ['pid'],
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body.hasClientSecret).toBe(true)
    expect(created.body).not.toHaveProperty('clientSecret')
    const metadata = (await (
      await fetch(`${baseUrl}/.well-known/openid-credential-issuer/issuers/${tenant}`)
    ).json()) as Json
    expect(metadata.authorization_servers).toStrictEqual([issuer(), jwtAs.url, opaqueAs.url])

    const wallet = await externalWallet()
    const token = await wallet.authorize(issuer(), { configurationId: 'pid', server: opaqueAs.url })
    expect(token.access_token.split('.')).toHaveLength(1)
    const answer = await credentialRequest(wallet, token.access_token, { credential_configuration_id: 'pid' })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(disclosed(answer.body.credentials[0].credential)).toMatchObject({ given_name: 'Given-alice' })
    // The same token again: the cached introspection answer serves (RFC 7662 §4), no new call.
    const calls = opaqueAs.introspections()
    const again = await credentialRequest(wallet, token.access_token, { credential_configuration_id: 'pid' })
    expect(again.body.error).toBe('credential_request_denied')
    expect(opaqueAs.introspections()).toBe(calls)

    // A wrong secret: the server refuses our introspection, the token is not accepted.
    const replaced = await api('PUT', '/api/auth-servers/bank', {
      id: 'bank',
      issuer: opaqueAs.url,
      tokenCheck: 'introspection',
      clientId: INTROSPECTION_CLIENT.id,
      clientSecret: 'a-wrong-secret-0123456789',
      credentialConfigurationIds: ['pid'],
    })
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200)
    const fresh = await wallet.authorize(issuer(), { configurationId: 'pid', server: opaqueAs.url })
    const refused = await credentialRequest(wallet, fresh.access_token, {
      credential_configuration_id: 'pid',
    })
    // Our misconfiguration, not the wallet's token: a server error naming the upstream answer.
    expect({ status: refused.status, error: refused.body.error }).toStrictEqual({
      status: 502,
      error: 'server_error',
    })
    expect((await api('DELETE', '/api/auth-servers/bank')).status).toBe(204)
  })

  it('tenancy: another tenant’s client reads no server of this tenant (404)', async () => {
    const response = await app.inject({ url: '/api/auth-servers/as', headers: otherAdmin })
    expect(response.statusCode).toBe(404)
  })
})
