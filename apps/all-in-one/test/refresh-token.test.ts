import { createHash, randomBytes } from 'node:crypto'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import type { FastifyInstance } from 'fastify'
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { attester, type KeyPair, keyPair, sign } from './attestation-fixtures'
import { startAllInOneWorld } from './harness'

// The refresh token grant (RFC 6749 §6) of the authorization code flow, over app.inject.
const REDIRECT = 'https://wallet.example/cb'
const DAY_MS = 86_400_000
// biome-ignore lint/suspicious/noExplicitAny: tests read loosely typed JSON answers
type Json = any

describe('RFC 6749 §6, BCP 4.14.2, RFC 9449 §5: refresh tokens of the authorization code flow', () => {
  let app: FastifyInstance
  let admin: Record<string, string>
  let trusted: Awaited<ReturnType<typeof attester>>
  /** Moves the service's clock (expiry tests). */
  let skewMs = 0
  const baseUrl = 'http://127.0.0.1:3000'
  let tenant: string
  let issuer: string

  const inject = async (
    method: 'GET' | 'POST',
    url: string,
    options: { form?: Record<string, string>; json?: unknown; headers?: Record<string, string> } = {},
  ) => {
    const response = await app.inject({
      method,
      url,
      headers: {
        ...(options.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...options.headers,
      },
      ...(options.form ? { payload: new URLSearchParams(options.form).toString() } : {}),
      ...(options.json ? { payload: options.json as never } : {}),
    })
    return { status: response.statusCode, headers: response.headers, body: response.json() as Json }
  }
  const token = (form: Record<string, string>, headers: Record<string, string> = {}) =>
    inject('POST', `/issuers/${tenant}/token`, { form, headers })
  const refresh = (refreshToken: string, headers: Record<string, string> = {}, clientId = 'wallet-1') =>
    token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId }, headers)

  /** A DPoP proof (RFC 9449 §4.2) for the token endpoint, with a fresh server nonce. */
  async function dpop(key: KeyPair) {
    const nonce = (await inject('POST', `/issuers/${tenant}/nonce`)).headers['dpop-nonce'] as string
    return {
      dpop: await sign(
        key,
        { typ: 'dpop+jwt', jwk: key.publicJwk },
        {
          htm: 'POST',
          htu: `${issuer}/token`,
          iat: Math.floor((Date.now() + skewMs) / 1000),
          jti: randomBytes(12).toString('base64url'),
          nonce,
        },
      ),
    }
  }

  /** A wallet attestation of `wallet-client` and its PoP (ABCA), from the trusted provider. */
  async function attestation() {
    const instance = await keyPair()
    const now = Math.floor(Date.now() / 1000)
    return {
      'oauth-client-attestation': await sign(
        trusted.leaf,
        { typ: 'oauth-client-attestation+jwt', x5c: trusted.x5c },
        {
          iss: 'https://wallet.example.com',
          sub: 'wallet-client',
          exp: now + 600,
          iat: now,
          cnf: { jwk: instance.publicJwk },
        },
      ),
      'oauth-client-attestation-pop': await sign(
        instance,
        { typ: 'oauth-client-attestation-pop+jwt' },
        { iss: 'wallet-client', aud: issuer, jti: randomBytes(12).toString('base64url'), iat: now },
      ),
    }
  }

  /**
   * An offer of `configurationId`, PAR with its issuer_state, /authorize and the code redeemed at
   * /token with `tokenHeaders` (DPoP, attestation): the token response and the offer's session id.
   */
  async function grant(
    options: {
      configurationId?: string
      clientId?: string
      details?: boolean
      tokenHeaders?: Record<string, string>
      /** Headers of the pushed request (a wallet attestation, when a configuration requires one). */
      parHeaders?: Record<string, string>
    } = {},
  ) {
    const configurationId = options.configurationId ?? 'pid'
    const clientId = options.clientId ?? 'wallet-1'
    const offered = await inject('POST', '/api/offers', {
      headers: admin,
      json: {
        credentialConfigurationIds: [configurationId],
        grant: 'authorization_code',
        claims: { [configurationId]: { given_name: 'Erika' } },
      },
    })
    expect(offered.status, JSON.stringify(offered.body)).toBe(201)
    const verifier = randomBytes(32).toString('base64url')
    const pushed = await inject('POST', `/issuers/${tenant}/par`, {
      ...(options.parHeaders ? { headers: options.parHeaders } : {}),
      form: {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: REDIRECT,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
        issuer_state: offered.body.credentialOffer.grants.authorization_code.issuer_state,
        ...(options.details
          ? {
              authorization_details: JSON.stringify([
                { type: 'openid_credential', credential_configuration_id: configurationId },
              ]),
            }
          : { scope: configurationId }),
      },
    })
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(201)
    const authorized = await app.inject({
      method: 'GET',
      url: `/issuers/${tenant}/authorize?${new URLSearchParams({ client_id: clientId, request_uri: pushed.body.request_uri })}`,
    })
    const code = new URL(authorized.headers.location as string).searchParams.get('code') as string
    const answer = await token(
      {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
        client_id: clientId,
      },
      options.tokenHeaders,
    )
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.refresh_token).toEqual(expect.any(String))
    return { answer: answer.body, sessionId: offered.body.sessionId as string }
  }

  const sessionStatus = async (id: string) =>
    (await inject('GET', `/api/sessions/${id}`, { headers: admin })).body.status

  /** A credential request by the access token of `answer`; `body` is the request without proofs. */
  async function credential(answer: Json, body: Record<string, unknown>) {
    const holder = await generateKeyPair('ES256')
    const { c_nonce } = (await inject('POST', `/issuers/${tenant}/nonce`)).body
    const proof = await new SignJWT({
      aud: issuer,
      nonce: c_nonce,
      iat: Math.floor((Date.now() + skewMs) / 1000),
    })
      .setProtectedHeader({
        alg: 'ES256',
        typ: 'openid4vci-proof+jwt',
        jwk: await exportJWK(holder.publicKey),
      })
      .sign(holder.privateKey)
    return inject('POST', `/issuers/${tenant}/credential`, {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${answer.access_token}` },
      json: { ...body, proofs: { jwt: [proof] } },
    })
  }

  beforeAll(async () => {
    trusted = await attester('Refresh Wallet')
    // The `refresh-token` world (test/worlds/refresh-token): tenant a's `pid` and `attested` (a
    // wallet attestation from `trusted`) hand out refresh tokens, `plain` does not.
    const started = await startAllInOneWorld(
      testDatabases().at(-1) as TestDatabase,
      'refresh-token',
      baseUrl,
      { TRUSTED_WALLET_ANCHOR: trusted.rootPem },
      () => new Date(Date.now() + skewMs),
    )
    app = started.app
    tenant = started.tenants.a.id
    issuer = `${baseUrl}/issuers/${tenant}`
    admin = started.tenants.a.auth
  }, 60_000)
  afterAll(() => app?.close())

  it('BCP 2.2.2, 4.14.2 (I-49, S-35): the new refresh token works; the rotated one presented again revokes the grant', async () => {
    const { answer, sessionId } = await grant()
    const first = await refresh(answer.refresh_token)
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.headers['cache-control']).toBe('no-store')
    expect(first.body.token_type).toBe('Bearer')
    expect(first.body.refresh_token).not.toBe(answer.refresh_token)
    const second = await refresh(first.body.refresh_token)
    expect(second.status, JSON.stringify(second.body)).toBe(200)
    expect(await sessionStatus(sessionId)).toBe('token_issued')

    // The rotated token comes back: refused, and the live token and the session's access die.
    expect((await refresh(first.body.refresh_token)).body.error).toBe('invalid_grant')
    expect((await refresh(second.body.refresh_token)).body.error).toBe('invalid_grant')
    const revoked = await credential(second.body, { credential_configuration_id: 'pid' })
    expect(revoked.status).toBe(401)
    expect(revoked.body.error).toBe('invalid_token')
    expect(await sessionStatus(sessionId)).toBe('failed')
  })

  it('RFC 9449 §5 (I-45, I-49): DPoP used only at /token binds the refresh token; no proof or another key is invalid_dpop_proof and spends nothing', async () => {
    const key = await keyPair()
    const { answer } = await grant({ tokenHeaders: await dpop(key) })
    expect(answer.token_type).toBe('DPoP')
    const noProof = await refresh(answer.refresh_token)
    expect(noProof.status).toBe(400)
    expect(noProof.body.error).toBe('invalid_dpop_proof')
    const otherKey = await refresh(answer.refresh_token, await dpop(await keyPair()))
    expect(otherKey.body.error).toBe('invalid_dpop_proof')

    const bound = await refresh(answer.refresh_token, await dpop(key))
    expect(bound.status, JSON.stringify(bound.body)).toBe(200)
    expect(bound.body.token_type).toBe('DPoP')
    expect(decodeJwt(bound.body.access_token).cnf).toStrictEqual({ jkt: key.jkt })
    // The rotated token stays bound to the same key.
    expect((await refresh(bound.body.refresh_token)).body.error).toBe('invalid_dpop_proof')
    expect((await refresh(bound.body.refresh_token, await dpop(key))).status).toBe(200)
  })

  it('RFC 6749 §6, §3.2.1 (I-40, I-49): another client is invalid_grant, no client is invalid_request; neither spends the token', async () => {
    const { answer } = await grant()
    expect((await refresh(answer.refresh_token, {}, 'wallet-2')).body.error).toBe('invalid_grant')
    const anonymous = await token({ grant_type: 'refresh_token', refresh_token: answer.refresh_token })
    expect(anonymous.body.error).toBe('invalid_request')
    expect((await refresh(answer.refresh_token)).status).toBe(200)
  })

  it('HAIP 4.4.1 (I-48, I-49): walletAttestation "required" requires the attestation at refresh too; a refusal spends nothing', async () => {
    const { answer } = await grant({
      configurationId: 'attested',
      clientId: 'wallet-client',
      parHeaders: await attestation(),
      tokenHeaders: await attestation(),
    })
    const bare = await refresh(answer.refresh_token, {}, 'wallet-client')
    expect(bare.status).toBe(401)
    expect(bare.body.error).toBe('invalid_client')
    // The attested wallet is named by its attestation (no client_id needed).
    const attested = await token(
      { grant_type: 'refresh_token', refresh_token: answer.refresh_token },
      await attestation(),
    )
    expect(attested.status, JSON.stringify(attested.body)).toBe(200)
  })

  it('BCP 4.14.2 (I-49): of parallel refreshes with one token exactly one succeeds, and the grant is revoked', async () => {
    const { answer } = await grant()
    // On PostgreSQL all five read the token before any rotates (the conditional update decides); on
    // PGlite they run one after another, and the later ones are reuses.
    const answers = await Promise.all(Array.from({ length: 5 }, () => refresh(answer.refresh_token)))
    expect(answers.map((a) => a.status).sort()).toStrictEqual([200, 400, 400, 400, 400])
    const winner = answers.find((a) => a.status === 200) as Json
    expect(new Set(answers.filter((a) => a.status === 400).map((a) => a.body.error))).toStrictEqual(
      new Set(['invalid_grant']),
    )
    // The same token twice is a reuse: the winner's new refresh token is revoked as well.
    expect((await refresh(winner.body.refresh_token)).body.error).toBe('invalid_grant')
  })

  it('OpenID4VCI §6.2 (I-44): authorization_details and credential_identifiers are the same after a refresh, and the credential endpoint takes them', async () => {
    const { answer } = await grant({ details: true })
    const refreshed = await refresh(answer.refresh_token)
    expect(refreshed.status).toBe(200)
    expect(refreshed.body.authorization_details).toStrictEqual([
      { type: 'openid_credential', credential_configuration_id: 'pid', credential_identifiers: ['pid'] },
    ])
    expect(refreshed.body.authorization_details).toStrictEqual(answer.authorization_details)
    expect(decodeJwt(refreshed.body.access_token).credential_identifiers).toStrictEqual(
      decodeJwt(answer.access_token).credential_identifiers,
    )
    const issued = await credential(refreshed.body, { credential_identifier: 'pid' })
    expect(issued.status, JSON.stringify(issued.body)).toBe(200)
  })

  it('RFC 6749 §6 (I-49): a completed session refuses refresh (invalid_grant); a reused token then leaves it completed', async () => {
    const { answer, sessionId } = await grant()
    const refreshed = await refresh(answer.refresh_token)
    expect((await credential(refreshed.body, { credential_configuration_id: 'pid' })).status).toBe(200)
    expect(await sessionStatus(sessionId)).toBe('completed')
    expect((await refresh(refreshed.body.refresh_token)).body.error).toBe('invalid_grant')
    expect((await refresh(answer.refresh_token)).body.error).toBe('invalid_grant')
    expect(await sessionStatus(sessionId)).toBe('completed')
  })

  it('BCP 4.14.2 (I-49): a refresh token dies 7 days unused, and the chain 30 days after the code however often it rotates', async () => {
    try {
      const idle = await grant()
      let chain = (await grant()).answer.refresh_token as string
      skewMs = 7 * DAY_MS + 1000
      expect((await refresh(idle.answer.refresh_token)).body.error).toBe('invalid_grant')
      for (const day of [6, 12, 18, 24, 29.9]) {
        skewMs = day * DAY_MS
        const next = await refresh(chain)
        expect(next.status, `day ${day}: ${JSON.stringify(next.body)}`).toBe(200)
        chain = next.body.refresh_token
      }
      skewMs = 30 * DAY_MS + 60_000
      expect((await refresh(chain)).body.error).toBe('invalid_grant')
    } finally {
      skewMs = 0
    }
  })

  describe('OpenID4VCI §6.2: the pre-authorized code grant', () => {
    const PRE_AUTH = 'urn:ietf:params:oauth:grant-type:pre-authorized_code'

    /** A pre-authorized offer of `configurationId` redeemed at /token with `form` and `headers`. */
    async function preAuthorized(
      configurationId: string,
      form: Record<string, string> = {},
      headers: Record<string, string> = {},
    ) {
      const offered = await inject('POST', '/api/offers', {
        headers: admin,
        json: {
          credentialConfigurationIds: [configurationId],
          claims: { [configurationId]: { given_name: 'Erika' } },
        },
      })
      expect(offered.status, JSON.stringify(offered.body)).toBe(201)
      const code = offered.body.credentialOffer.grants[PRE_AUTH]['pre-authorized_code'] as string
      const answer = await token({ grant_type: PRE_AUTH, 'pre-authorized_code': code, ...form }, headers)
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      return { answer: answer.body, sessionId: offered.body.sessionId as string }
    }
    const anonymousRefresh = (refreshToken: string, headers: Record<string, string> = {}) =>
      token({ grant_type: 'refresh_token', refresh_token: refreshToken }, headers)

    it('I-49: a refreshTokens configuration gets a refresh token; after the access token expired, the refreshed one gets the credential', async () => {
      const { answer, sessionId } = await preAuthorized('pid')
      expect(answer.refresh_token).toEqual(expect.any(String))
      try {
        skewMs = 301_000
        const expired = await credential(answer, { credential_configuration_id: 'pid' })
        expect(expired.status).toBe(401)
        expect(expired.body.error).toBe('invalid_token')
        // An anonymous wallet's grant is refreshed without client_id, as its code was redeemed.
        const refreshed = await anonymousRefresh(answer.refresh_token)
        expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200)
        expect(decodeJwt(refreshed.body.access_token)).toMatchObject({ sub: sessionId, client_id: 'wallet' })
        const issued = await credential(refreshed.body, { credential_configuration_id: 'pid' })
        expect(issued.status, JSON.stringify(issued.body)).toBe(200)
        expect(await sessionStatus(sessionId)).toBe('completed')
        // Nothing is left to issue: the next refresh is refused.
        expect((await anonymousRefresh(refreshed.body.refresh_token)).body.error).toBe('invalid_grant')
      } finally {
        skewMs = 0
      }
    })

    it('BCP 4.14.2 (I-49, S-35): rotation and reuse revocation as in the code flow; a client_id the code was not redeemed with is invalid_grant', async () => {
      const { answer, sessionId } = await preAuthorized('pid')
      const foreign = await refresh(answer.refresh_token, {}, 'wallet-9')
      expect(foreign.body.error, JSON.stringify(foreign.body)).toBe('invalid_grant')
      const first = await anonymousRefresh(answer.refresh_token)
      expect(first.status, JSON.stringify(first.body)).toBe(200)
      expect((await anonymousRefresh(answer.refresh_token)).body.error).toBe('invalid_grant')
      expect((await anonymousRefresh(first.body.refresh_token)).body.error).toBe('invalid_grant')
      expect(await sessionStatus(sessionId)).toBe('failed')
    })

    it('RFC 9449 §5 (I-45, I-49): a DPoP proof at /token binds the refresh token to its key', async () => {
      const key = await keyPair()
      const { answer } = await preAuthorized('pid', {}, await dpop(key))
      expect(answer.token_type).toBe('DPoP')
      expect((await anonymousRefresh(answer.refresh_token)).body.error).toBe('invalid_dpop_proof')
      const bound = await anonymousRefresh(answer.refresh_token, await dpop(key))
      expect(bound.status, JSON.stringify(bound.body)).toBe(200)
      expect(decodeJwt(bound.body.access_token).cnf).toStrictEqual({ jkt: key.jkt })
    })

    it('OpenID4VCI §6.2: a configuration without refreshTokens gets access token, type and lifetime only', async () => {
      const { answer } = await preAuthorized('plain')
      expect(answer.refresh_token).toBeUndefined()
      expect(Object.keys(answer).sort()).toStrictEqual(['access_token', 'expires_in', 'token_type'])
    })
  })
})
