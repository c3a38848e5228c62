import { createHash, randomBytes } from 'node:crypto'
import { x5cEntry } from '@credential-service/crypto'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import {
  type CallbackContext,
  clientAuthenticationClientAttestationJwt,
  createClientAttestationJwt,
  setGlobalConfig,
} from '@openid4vc/oauth2'
import { Openid4vciClient } from '@openid4vc/openid4vci'
import type { FastifyInstance } from 'fastify'
import { decodeJwt, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  attester,
  certificate,
  flipSignature,
  type KeyPair,
  keyPair,
  selfSignedCopy,
  sign,
  signUnchecked,
} from './attestation-fixtures'
import { freePort } from './free-port'
import { startAllInOneWorld } from './harness'

// oid4vc-ts over real HTTP on 127.0.0.1.
setGlobalConfig({ allowInsecureUrls: true })

const PRE_AUTH = 'urn:ietf:params:oauth:grant-type:pre-authorized_code'

describe.each(testDatabases())(
  'DPoP (RFC 9449) and wallet attestation (ABCA -07) on $name',
  (testDatabase) => {
    let app: FastifyInstance
    let baseUrl: string
    let admin: Record<string, string>
    let tenant: string
    let issuer: string
    let trusted: Awaited<ReturnType<typeof attester>>
    let untrusted: Awaited<ReturnType<typeof attester>>
    let viaIntermediate: Awaited<ReturnType<typeof attester>>
    /** Tenant B: every configuration requires a wallet attestation, from its own wallet provider. */
    let tenantB: string
    let adminB: Record<string, string>
    let walletOfB: Awaited<ReturnType<typeof attester>>
    /** Added to the server clock: moves the DPoP nonce window without waiting. */
    let clockSkewMs = 0

    beforeAll(async () => {
      const port = await freePort()
      baseUrl = `http://127.0.0.1:${port}`
      trusted = await attester('Trusted Wallet')
      untrusted = await attester('Unknown Wallet')
      viaIntermediate = await attester('Chained Wallet', { intermediate: true })
      walletOfB = await attester('Wallet of B')
      // The `haip` world (test/worlds/haip): tenant a's wallet providers trust `trusted` and
      // `viaIntermediate`, tenant b's only `walletOfB`; `untrusted` is in no world.
      const started = await startAllInOneWorld(
        testDatabase as TestDatabase,
        'haip',
        baseUrl,
        {
          TRUSTED_WALLET_ANCHOR: trusted.rootPem,
          CHAINED_WALLET_ANCHOR: viaIntermediate.rootPem,
          B_WALLET_ANCHOR: walletOfB.rootPem,
        },
        () => new Date(Date.now() + clockSkewMs),
      )
      app = started.app
      await app.listen({ host: '127.0.0.1', port })
      tenant = started.tenants.a.id
      tenantB = started.tenants.b.id
      admin = started.tenants.a.auth
      adminB = started.tenants.b.auth
      issuer = `${baseUrl}/issuers/${tenant}`
    }, 60_000)
    afterAll(() => app?.close())

    async function offer(configurationId: string, headers = admin): Promise<string> {
      const response = await app.inject({
        method: 'POST',
        url: '/api/offers',
        headers,
        payload: {
          credentialConfigurationIds: [configurationId],
          claims: { [configurationId]: { given_name: 'Erika' } },
        },
      })
      expect(response.statusCode, response.body).toBe(201)
      return response.json().credentialOffer.grants[PRE_AUTH]['pre-authorized_code']
    }

    async function serverNonce(): Promise<string> {
      const response = await app.inject({ method: 'POST', url: `/issuers/${tenant}/nonce` })
      return response.headers['dpop-nonce'] as string
    }

    async function dpop(
      key: KeyPair,
      options: {
        htm?: string
        htu?: string
        nonce?: string | null
        iat?: number
        jti?: string
        ath?: string
        header?: Record<string, unknown>
        omit?: string[]
      } = {},
    ): Promise<string> {
      const payload: Record<string, unknown> = {
        htm: options.htm ?? 'POST',
        htu: options.htu ?? `${issuer}/token`,
        iat: options.iat ?? Math.floor(Date.now() / 1000),
        jti: options.jti ?? randomBytes(12).toString('base64url'),
        ...(options.ath ? { ath: options.ath } : {}),
      }
      const nonce = options.nonce === undefined ? await serverNonce() : options.nonce
      if (nonce !== null) payload.nonce = nonce
      for (const name of options.omit ?? []) delete payload[name]
      return sign(key, { typ: 'dpop+jwt', jwk: key.publicJwk, ...options.header }, payload)
    }

    /** A wallet attestation and its PoP, from `from` (trusted by default). */
    async function attestation(
      options: {
        from?: Awaited<ReturnType<typeof attester>>
        x5c?: string[]
        /** Signs the attestation instead of the attester's leaf key. */
        signer?: KeyPair
        sub?: string | null
        exp?: number
        aud?: string | string[]
        popKey?: KeyPair
        jti?: string
        /** Claims left out of the attestation. */
        omit?: string[]
        /** Claims of the PoP replaced (undefined: left out). */
        pop?: Record<string, unknown>
        popTyp?: string
      } = {},
    ) {
      const from = options.from ?? trusted
      const instance = await keyPair()
      const now = Math.floor(Date.now() / 1000)
      const payload: Record<string, unknown> = {
        iss: 'https://wallet.example.com',
        sub: 'wallet-client',
        exp: options.exp ?? now + 600,
        iat: now,
        cnf: { jwk: instance.publicJwk },
      }
      if (options.sub === null) delete payload.sub
      else if (options.sub) payload.sub = options.sub
      for (const name of options.omit ?? []) delete payload[name]
      const jwt = await sign(
        options.signer ?? from.leaf,
        { typ: 'oauth-client-attestation+jwt', x5c: options.x5c ?? from.x5c },
        payload,
      )
      const pop = await sign(
        options.popKey ?? instance,
        { typ: options.popTyp ?? 'oauth-client-attestation-pop+jwt' },
        JSON.parse(
          JSON.stringify({
            iss: 'wallet-client',
            aud: options.aud ?? issuer,
            jti: options.jti ?? randomBytes(12).toString('base64url'),
            iat: now,
            ...options.pop,
          }),
        ),
      )
      return { 'oauth-client-attestation': jwt, 'oauth-client-attestation-pop': pop }
    }

    const tokenRequest = (
      code: string,
      headers: Record<string, string> = {},
      form: Record<string, string> = {},
    ) =>
      app.inject({
        method: 'POST',
        url: `/issuers/${tenant}/token`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        payload: new URLSearchParams({
          grant_type: PRE_AUTH,
          'pre-authorized_code': code,
          ...form,
        }).toString(),
      })

    it('I-14 / RFC 8414, HAIP 4.1: AS metadata lists DPoP algs and attest_jwt_client_auth', async () => {
      const response = await app.inject({ url: `/.well-known/oauth-authorization-server/issuers/${tenant}` })
      expect(response.json()).toMatchObject({
        'pre-authorized_grant_anonymous_access_supported': true,
        token_endpoint_auth_methods_supported: ['none', 'attest_jwt_client_auth'],
        dpop_signing_alg_values_supported: ['ES256', 'ES384', 'Ed25519'],
        client_attestation_signing_alg_values_supported: ['ES256', 'ES384', 'Ed25519'],
        client_attestation_pop_signing_alg_values_supported: ['ES256', 'ES384', 'Ed25519'],
      })
    })

    it('I-14 / OpenID4VCI §12.3, HAIP 4.4.1: when every configuration requires wallet attestation, neither anonymous access nor auth method none is advertised', async () => {
      const response = await app.inject({ url: `/.well-known/oauth-authorization-server/issuers/${tenantB}` })
      expect(response.json()).toMatchObject({
        'pre-authorized_grant_anonymous_access_supported': false,
        token_endpoint_auth_methods_supported: ['attest_jwt_client_auth'],
      })
    })

    it('I-48, S-60 / spec §1.2 tenant isolation: tenant B does not trust the wallet provider of tenant A (401 invalid_client)', async () => {
      const issuerB = `${baseUrl}/issuers/${tenantB}`
      const atB = async (headers: Record<string, string>) =>
        app.inject({
          method: 'POST',
          url: `/issuers/${tenantB}/token`,
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
          payload: new URLSearchParams({
            grant_type: PRE_AUTH,
            'pre-authorized_code': await offer('strict', adminB),
          }).toString(),
        })
      const fromA = await atB(await attestation({ aud: issuerB }))
      expect(fromA.statusCode).toBe(401)
      expect(fromA.json()).toStrictEqual({
        error: 'invalid_client',
        error_description:
          'the client attestation is refused: x5c does not chain to a trusted wallet provider',
      })
      const own = await atB(await attestation({ from: walletOfB, aud: issuerB }))
      expect(own.statusCode, own.body).toBe(200)
    })

    it('I-50 / RFC 9449 §8: the nonce endpoint answers a DPoP-Nonce header, fresh per tenant', async () => {
      const response = await app.inject({ method: 'POST', url: `/issuers/${tenant}/nonce` })
      expect(response.statusCode).toBe(200)
      expect(response.headers['dpop-nonce']).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]+$/)
    })

    it('I-45 / RFC 9449 §5: a token request with a DPoP proof gets token_type DPoP and cnf.jkt', async () => {
      const key = await keyPair()
      const response = await tokenRequest(await offer('pid'), { dpop: await dpop(key) })
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().token_type).toBe('DPoP')
      expect(decodeJwt(response.json().access_token).cnf).toStrictEqual({ jkt: key.jkt })
      expect(response.headers['dpop-nonce']).toBeTypeOf('string')
    })

    it('pre-authorized code without DPoP stays a Bearer token when DPoP is optional (bench flow)', async () => {
      const response = await tokenRequest(await offer('pid'))
      expect(response.statusCode).toBe(200)
      expect(response.json().token_type).toBe('Bearer')
    })

    it('I-47, S-44 / RFC 9449 §8: no nonce or a stale one is use_dpop_nonce with a fresh DPoP-Nonce', async () => {
      const key = await keyPair()
      const code = await offer('pid')
      for (const nonce of [
        null,
        '0.AAAAAAAAAAAAAAAAAAAAAAAA',
        `${(await serverNonce()).split('.')[0]}.forged`,
      ]) {
        const response = await tokenRequest(code, { dpop: await dpop(key, { nonce }) })
        expect(response.statusCode, String(nonce)).toBe(400)
        expect(response.json().error).toBe('use_dpop_nonce')
        expect(response.headers['dpop-nonce']).toMatch(/^[0-9a-z]+\./)
      }
      // The code was not spent by the refusals.
      expect((await tokenRequest(code, { dpop: await dpop(key) })).statusCode).toBe(200)
    })

    it('S-40 / RFC 9449 §11.1: a replayed DPoP proof (same jti) is invalid_dpop_proof', async () => {
      const key = await keyPair()
      const proof = await dpop(key)
      expect((await tokenRequest(await offer('pid'), { dpop: proof })).statusCode).toBe(200)
      const replay = await tokenRequest(await offer('pid'), { dpop: proof })
      expect(replay.statusCode).toBe(400)
      expect(replay.json().error).toBe('invalid_dpop_proof')
    })

    it('S-41 / RFC 9449 §4.3: htm PUT and another htu fail; a query on htu is ignored', async () => {
      const key = await keyPair()
      for (const options of [
        { htm: 'PUT' },
        { htu: `${issuer}/credential` },
        { htu: `${baseUrl}/issuers/other/token` },
      ]) {
        const response = await tokenRequest(await offer('pid'), { dpop: await dpop(key, options) })
        expect(response.statusCode, JSON.stringify(options)).toBe(400)
        expect(response.json().error).toBe('invalid_dpop_proof')
      }
      const withQuery = await tokenRequest(await offer('pid'), {
        dpop: await dpop(key, { htu: `${issuer}/token?x=1#f` }),
      })
      expect(withQuery.statusCode, withQuery.body).toBe(200)
    })

    it('S-42 / RFC 9449 §4.3: iat ±10 s passes, ±1 h fails', async () => {
      const key = await keyPair()
      const now = Math.floor(Date.now() / 1000)
      for (const iat of [now - 10, now + 10]) {
        expect((await tokenRequest(await offer('pid'), { dpop: await dpop(key, { iat }) })).statusCode).toBe(
          200,
        )
      }
      for (const iat of [now - 3600, now + 3600]) {
        const response = await tokenRequest(await offer('pid'), { dpop: await dpop(key, { iat }) })
        expect(response.statusCode).toBe(400)
        expect(response.json().error).toBe('invalid_dpop_proof')
      }
    })

    it('S-01, S-03, S-05, S-06 / JWTBCP 3.1, 3.11: alg none, RS256, ES512, no typ, private jwk are refused', async () => {
      const key = await keyPair()
      const header = (value: Record<string, unknown>) =>
        Buffer.from(JSON.stringify(value)).toString('base64url')
      const body = Buffer.from(
        JSON.stringify({
          htm: 'POST',
          htu: `${issuer}/token`,
          iat: Math.floor(Date.now() / 1000),
          jti: 'x',
          nonce: await serverNonce(),
        }),
      ).toString('base64url')
      const rsa = await keyPair('RS256')
      const es512 = await keyPair('ES512')
      const proofs = [
        `${header({ typ: 'dpop+jwt', alg: 'none', jwk: key.publicJwk })}.${body}.`,
        await sign(rsa, { typ: 'dpop+jwt', alg: 'RS256', jwk: rsa.publicJwk }, decodeJwt(`x.${body}.x`)),
        await sign(es512, { typ: 'dpop+jwt', alg: 'ES512', jwk: es512.publicJwk }, decodeJwt(`x.${body}.x`)),
        await dpop(key, { header: { typ: undefined } }),
        await dpop(key, { header: { typ: 'JWT' } }),
        await dpop(key, { header: { jwk: key.privateJwk } }),
      ]
      for (const [index, proof] of proofs.entries()) {
        const response = await tokenRequest(await offer('pid'), { dpop: proof })
        expect(response.statusCode, `proof ${index}`).toBe(400)
        expect(response.json().error, `proof ${index}`).toBe('invalid_dpop_proof')
      }
    })

    it('S-40 / RFC 9449 §4.3, §11.1: a valid DPoP proof at an unknown tenant is 404 at every endpoint that records its jti', async () => {
      const key = await keyPair()
      const bound = (await tokenRequest(await offer('pid'), { dpop: await dpop(key) })).json().access_token
      const unknown = `nobody-${crypto.randomUUID().slice(0, 8)}`
      // The token endpoint answers a nonce for any tenant path: a proof that passes every DPoP check.
      const probe = await app.inject({ method: 'POST', url: `/issuers/${unknown}/token` })
      const nonce = probe.headers['dpop-nonce'] as string
      const ath = createHash('sha256').update(bound).digest('base64url')
      for (const endpoint of ['token', 'credential', 'deferred-credential', 'notification']) {
        const htu = `${baseUrl}/issuers/${unknown}/${endpoint}`
        const response = await app.inject({
          method: 'POST',
          url: `/issuers/${unknown}/${endpoint}`,
          headers: {
            'content-type': 'application/json',
            dpop: await dpop(key, { htu, nonce, ...(endpoint === 'token' ? {} : { ath }) }),
            ...(endpoint === 'token' ? {} : { authorization: `DPoP ${bound}` }),
          },
          payload: endpoint === 'token' ? { grant_type: PRE_AUTH, 'pre-authorized_code': 'x' } : {},
        })
        expect(response.statusCode, `${endpoint}: ${response.body}`).toBe(404)
      }
    })

    it('S-43 / RFC 9449 §4.3: two DPoP headers, or a proof without jti, htm, htu or iat, is invalid_dpop_proof', async () => {
      const key = await keyPair()
      const two = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: [
          ['content-type', 'application/x-www-form-urlencoded'],
          ['dpop', await dpop(key)],
          ['dpop', await dpop(key)],
        ],
        body: new URLSearchParams({ grant_type: PRE_AUTH, 'pre-authorized_code': await offer('pid') }),
      })
      expect(two.status).toBe(400)
      expect(((await two.json()) as { error: string }).error).toBe('invalid_dpop_proof')
      for (const claim of ['jti', 'htm', 'htu', 'iat']) {
        const response = await tokenRequest(await offer('pid'), { dpop: await dpop(key, { omit: [claim] }) })
        expect(response.json().error, claim).toBe('invalid_dpop_proof')
      }
    })

    /**
     * Proofs that must fail before any other check (S-04, S-07, S-10, S-12, S-43), for `htu` and, at
     * a resource endpoint, the token hash `ath`.
     */
    async function brokenProofs(htu: string, ath?: string): Promise<Record<string, string>> {
      const key = await keyPair()
      const nonce = await serverNonce()
      const claims = () => ({
        htm: 'POST',
        htu,
        iat: Math.floor(Date.now() / 1000),
        jti: randomBytes(12).toString('base64url'),
        nonce,
        ...(ath ? { ath } : {}),
      })
      const proof = await dpop(key, { htu, nonce, ...(ath ? { ath } : {}) })
      const [h, p, signature] = proof.split('.') as [string, string, string]
      const json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
      return {
        'S-04 one signature byte flipped': flipSignature(proof),
        'S-07 jwk of another key': await sign(
          key,
          { typ: 'dpop+jwt', jwk: (await keyPair()).publicJwk },
          claims(),
        ),
        'S-43 no jwk': await sign(key, { typ: 'dpop+jwt' }, claims()),
        'S-43 jwk not an object': await sign(key, { typ: 'dpop+jwt', jwk: 'key' }, claims()),
        'S-10 unknown crit': signUnchecked(
          key,
          { alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk, crit: ['urn:example:x'], 'urn:example:x': 1 },
          claims(),
        ),
        'S-12 two segments': `${h}.${p}`,
        'S-12 four segments': `${proof}.${signature}`,
        'S-12 bad base64url header': `${h}*.${p}.${signature}`,
        'S-12 bad base64url payload': `${h}.${p}*.${signature}`,
        'S-12 header not JSON': `${Buffer.from('{"typ":').toString('base64url')}.${p}.${signature}`,
        'S-12 payload not JSON': signUnchecked(
          key,
          { alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk },
          [] as never,
        ),
        'S-12 iat as a string': await sign(
          key,
          { typ: 'dpop+jwt', jwk: key.publicJwk },
          {
            ...claims(),
            iat: String(Math.floor(Date.now() / 1000)),
          },
        ),
        'S-12 a JSON header instead of a JWT': json({ typ: 'dpop+jwt' }),
      }
    }

    it('S-04, S-07, S-10, S-12, S-43 / RFC 9449 §4.3, RFC 7515 §4.1.11: a flipped signature, a jwk of another key or none, an unknown crit, or a malformed proof is 400 invalid_dpop_proof at the token endpoint', async () => {
      for (const [name, proof] of Object.entries(await brokenProofs(`${issuer}/token`))) {
        const response = await tokenRequest(await offer('pid'), { dpop: proof })
        expect(response.statusCode, `${name}: ${response.body}`).toBe(400)
        expect(response.json().error, name).toBe('invalid_dpop_proof')
      }
      // The unchecked signer itself makes proofs that pass: the crit is what is refused above.
      const key = await keyPair()
      const control = signUnchecked(
        key,
        { alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk },
        {
          htm: 'POST',
          htu: `${issuer}/token`,
          iat: Math.floor(Date.now() / 1000),
          jti: 'control',
          nonce: await serverNonce(),
        },
      )
      expect((await tokenRequest(await offer('pid'), { dpop: control })).statusCode).toBe(200)
    })

    describe('a DPoP-bound token at the credential, deferred credential and notification endpoints', () => {
      let key: KeyPair
      let accessToken: string
      const ath = () => createHash('sha256').update(accessToken).digest('base64url')
      const post = (endpoint: string, headers: Record<string, string>) =>
        app.inject({ method: 'POST', url: `/issuers/${tenant}/${endpoint}`, headers, payload: {} })
      const credential = (headers: Record<string, string>) => post('credential', headers)

      beforeAll(async () => {
        key = await keyPair()
        accessToken = (await tokenRequest(await offer('pid'), { dpop: await dpop(key) })).json().access_token
      })

      it('S-31 / RFC 9449 §7.2: the bound token sent as Bearer is 401 invalid_token with a DPoP challenge', async () => {
        const response = await credential({ authorization: `Bearer ${accessToken}` })
        expect(response.statusCode).toBe(401)
        expect(response.json().error).toBe('invalid_token')
        expect(response.headers['www-authenticate']).toMatch(/^DPoP error="invalid_token"/)
      })

      it('S-43 / RFC 9449 §7.1: ath missing or wrong, or another key, fails with WWW-Authenticate: DPoP', async () => {
        const htu = `${issuer}/credential`
        const missing = await credential({
          authorization: `DPoP ${accessToken}`,
          dpop: await dpop(key, { htu }),
        })
        expect(missing.statusCode).toBe(401)
        expect(missing.json().error).toBe('invalid_dpop_proof')
        expect(missing.headers['www-authenticate']).toMatch(/^DPoP error="invalid_dpop_proof"/)
        const wrong = await credential({
          authorization: `DPoP ${accessToken}`,
          dpop: await dpop(key, { htu, ath: 'AAAA' }),
        })
        expect(wrong.json().error).toBe('invalid_dpop_proof')
        const other = await credential({
          authorization: `DPoP ${accessToken}`,
          dpop: await dpop(await keyPair(), { htu, ath: ath() }),
        })
        expect(other.statusCode).toBe(401)
        expect(other.json().error).toBe('invalid_token')
        const none = await credential({ authorization: `DPoP ${accessToken}` })
        expect(none.statusCode).toBe(401)
        expect(none.json().error).toBe('invalid_token')
      })

      it('I-61 / RFC 9449 §7.1, §8: a proof without nonce at the credential endpoint is 401 use_dpop_nonce', async () => {
        const response = await credential({
          authorization: `DPoP ${accessToken}`,
          dpop: await dpop(key, { htu: `${issuer}/credential`, ath: ath(), nonce: null }),
        })
        expect(response.statusCode).toBe(401)
        expect(response.headers['www-authenticate']).toMatch(/^DPoP error="use_dpop_nonce"/)
        expect(response.headers['dpop-nonce']).toBeTypeOf('string')
      })

      it('I-61, S-44 / RFC 9449 §8, §9: a stale nonce at a resource endpoint is 401 use_dpop_nonce with a fresh DPoP-Nonce, which then passes', async () => {
        const fresh = await keyPair()
        const token = (await tokenRequest(await offer('pid'), { dpop: await dpop(fresh) })).json()
          .access_token
        const tokenHash = createHash('sha256').update(token).digest('base64url')
        const stale = await serverNonce()
        // Past the nonce's window and the next (at most 240 s), within the token's 300 s.
        clockSkewMs = 250_000
        try {
          const iat = Math.floor((Date.now() + clockSkewMs) / 1000)
          const proof = (nonce: string) =>
            dpop(fresh, { htu: `${issuer}/credential`, ath: tokenHash, nonce, iat })
          const refused = await credential({ authorization: `DPoP ${token}`, dpop: await proof(stale) })
          expect(refused.statusCode).toBe(401)
          expect(refused.json()).toStrictEqual({
            error: 'use_dpop_nonce',
            error_description: 'the DPoP nonce is stale; use the DPoP-Nonce header',
          })
          expect(refused.headers['www-authenticate']).toMatch(/^DPoP error="use_dpop_nonce"/)
          const next = refused.headers['dpop-nonce'] as string
          expect(next).toMatch(/^[0-9a-z]+\./)
          expect(next).not.toBe(stale)
          const retried = await credential({ authorization: `DPoP ${token}`, dpop: await proof(next) })
          expect(retried.json().error, retried.body).toBe('invalid_credential_request')
        } finally {
          clockSkewMs = 0
        }
      })

      it('I-61, S-43 / RFC 9449 §7.1, OpenID4VCI §9, §11: the deferred credential and notification endpoints take the bound token only with a proof for themselves', async () => {
        for (const [endpoint, pastAuthorization] of [
          ['deferred-credential', 'invalid_credential_request'],
          ['notification', 'invalid_notification_request'],
        ] as const) {
          const htu = `${issuer}/${endpoint}`
          const bearer = await post(endpoint, { authorization: `Bearer ${accessToken}` })
          expect(bearer.statusCode, endpoint).toBe(401)
          expect(bearer.headers['www-authenticate'], endpoint).toMatch(/^DPoP error="invalid_token"/)
          for (const [name, proof] of Object.entries({
            'htu of the credential endpoint': await dpop(key, { htu: `${issuer}/credential`, ath: ath() }),
            'no ath': await dpop(key, { htu }),
            'another key': await dpop(await keyPair(), { htu, ath: ath() }),
          })) {
            const response = await post(endpoint, { authorization: `DPoP ${accessToken}`, dpop: proof })
            expect(response.statusCode, `${endpoint}, ${name}`).toBe(401)
            expect(response.json().error, `${endpoint}, ${name}`).toMatch(/^invalid_(dpop_proof|token)$/)
            expect(response.headers['www-authenticate'], `${endpoint}, ${name}`).toMatch(/^DPoP error=/)
          }
          const passed = await post(endpoint, {
            authorization: `DPoP ${accessToken}`,
            dpop: await dpop(key, { htu, ath: ath() }),
          })
          // Past the token check: the empty body is what is refused now.
          expect(passed.statusCode, `${endpoint}: ${passed.body}`).toBe(400)
          expect(passed.json().error, endpoint).toBe(pastAuthorization)
        }
      })

      it('S-04, S-07, S-10, S-12, S-43 / RFC 9449 §7.1: a broken proof at a resource endpoint is 401 invalid_dpop_proof, never 500', async () => {
        for (const endpoint of ['credential', 'deferred-credential', 'notification']) {
          for (const [name, proof] of Object.entries(await brokenProofs(`${issuer}/${endpoint}`, ath()))) {
            const response = await post(endpoint, { authorization: `DPoP ${accessToken}`, dpop: proof })
            expect(response.statusCode, `${endpoint}, ${name}: ${response.body}`).toBe(401)
            expect(response.json().error, `${endpoint}, ${name}`).toBe('invalid_dpop_proof')
          }
        }
      })

      it('I-61 / RFC 9449 §7.1: scheme "dpop" in any case with a valid proof passes authorization', async () => {
        const response = await credential({
          authorization: `dPoP ${accessToken}`,
          dpop: await dpop(key, { htu: `${issuer}/credential`, ath: ath() }),
        })
        // Past the token check: the empty body is what is refused now.
        expect(response.statusCode).toBe(400)
        expect(response.json().error).toBe('invalid_credential_request')
      })
    })

    it('I-45, HAIP 4: dpop "required" refuses a token request without a proof; the code stays usable', async () => {
      const code = await offer('haip')
      const response = await tokenRequest(code, await attestation(), { client_id: 'wallet-client' })
      expect(response.statusCode).toBe(400)
      expect(response.json().error).toBe('invalid_dpop_proof')
      const bound = await tokenRequest(code, { ...(await attestation()), dpop: await dpop(await keyPair()) })
      expect(bound.statusCode, bound.body).toBe(200)
      expect(bound.json().token_type).toBe('DPoP')
    })

    it('I-45, HAIP 4, S-33: with a tx_code too, a token request without the required DPoP proof is refused before the guess is counted', async () => {
      const offered = await app.inject({
        method: 'POST',
        url: '/api/offers',
        headers: admin,
        payload: {
          credentialConfigurationIds: ['haip'],
          claims: { haip: { given_name: 'Erika' } },
          txCode: { length: 4, inputMode: 'numeric' },
        },
      })
      expect(offered.statusCode, offered.body).toBe(201)
      const code = offered.json().credentialOffer.grants[PRE_AUTH]['pre-authorized_code']
      const txCode = offered.json().txCode as string
      // More refusals than the tx_code allows guesses: none of them counts one.
      for (let i = 0; i < 6; i++) {
        const refused = await tokenRequest(code, await attestation(), { tx_code: '0000' })
        expect(refused.json().error).toBe('invalid_dpop_proof')
      }
      const bound = await tokenRequest(
        code,
        { ...(await attestation()), dpop: await dpop(await keyPair()) },
        { tx_code: txCode },
      )
      expect(bound.statusCode, bound.body).toBe(200)
    })

    it('I-48, HAIP 4.4.1: walletAttestation "required" refuses a token request without attestation (401 invalid_client)', async () => {
      const response = await tokenRequest(await offer('haip'), { dpop: await dpop(await keyPair()) })
      expect(response.statusCode).toBe(401)
      expect(response.json().error).toBe('invalid_client')
    })

    it('S-60..S-64 / ABCA 5.1, 5.2, 9: bad attestations and PoPs are 401 invalid_client', async () => {
      const other = await keyPair()
      const cases: Record<string, Record<string, string>> = {
        'S-60 untrusted attester': await attestation({ from: untrusted }),
        'S-60 anchor in x5c': await attestation({ x5c: [...trusted.x5c, x5cEntry(trusted.rootPem)] }),
        'S-60 self-signed leaf': await attestation({
          signer: trusted.root,
          x5c: [await selfSignedCopy(trusted)],
        }),
        'S-61 PoP signed by another key': await attestation({ popKey: other }),
        'S-62 attestation exp in the past': await attestation({ exp: Math.floor(Date.now() / 1000) - 60 }),
        'S-62 attestation without sub': await attestation({ sub: null }),
        'S-63 PoP aud is the token endpoint': await attestation({ aud: `${issuer}/token` }),
        'S-63 PoP aud is another tenant': await attestation({ aud: `${baseUrl}/issuers/other` }),
        'S-63 PoP aud is an array with this issuer and another tenant': await attestation({
          aud: [issuer, `${baseUrl}/issuers/other`],
        }),
        'S-63 PoP aud is an array of this issuer alone': await attestation({ aud: [issuer] }),
        'S-62 attestation without exp': await attestation({ omit: ['exp'] }),
        'S-62 attestation without cnf': await attestation({ omit: ['cnf'] }),
        'S-61 PoP without iat': await attestation({ pop: { iat: undefined } }),
        'S-61 PoP iat 5 minutes old': await attestation({
          pop: { iat: Math.floor(Date.now() / 1000) - 300 },
        }),
        'S-64 PoP without jti': await attestation({ pop: { jti: undefined } }),
        'S-05 PoP typ JWT': await attestation({ popTyp: 'JWT' }),
      }
      const forged = await attestation()
      const [h, p] = (forged['oauth-client-attestation'] as string).split('.')
      cases['S-60 bad signature'] = { ...forged, 'oauth-client-attestation': `${h}.${p}.${'A'.repeat(86)}` }
      cases['S-04, S-61 PoP with one signature byte flipped'] = {
        ...forged,
        'oauth-client-attestation-pop': flipSignature(forged['oauth-client-attestation-pop'] as string),
      }
      cases['I-48 PoP header without the attestation'] = {
        'oauth-client-attestation-pop': forged['oauth-client-attestation-pop'] as string,
      }
      for (const [name, headers] of Object.entries(cases)) {
        const response = await tokenRequest(await offer('pid'), headers)
        expect(response.statusCode, name).toBe(401)
        expect(response.json().error, name).toBe('invalid_client')
      }
      for (const aud of [[issuer], [issuer, `${baseUrl}/issuers/other`]]) {
        const response = await tokenRequest(await offer('pid'), await attestation({ aud }))
        expect(response.json().error_description, JSON.stringify(aud)).toMatch(/aud must be the issuer/)
      }
      const mismatch = await tokenRequest(await offer('pid'), await attestation(), {
        client_id: 'someone-else',
      })
      expect(mismatch.json().error, 'S-64 client_id ≠ sub').toBe('invalid_client')
      const once = await attestation({ jti: 'fixed-jti' })
      expect((await tokenRequest(await offer('pid'), once)).statusCode).toBe(200)
      const again = await tokenRequest(await offer('pid'), once)
      expect(again.statusCode, 'S-64 PoP jti replayed').toBe(401)
      expect(again.json()).toMatchObject({
        error: 'invalid_client',
        error_description: 'the client attestation PoP was already used',
      })
    })

    it('S-64 / ABCA (-10) §8: a PoP challenge from the challenge endpoint or a token answer passes; an unknown or stale one is use_attestation_challenge with a fresh challenge', async () => {
      const metadata = await app.inject({ url: `/.well-known/oauth-authorization-server/issuers/${tenant}` })
      expect(metadata.json().challenge_endpoint).toBe(`${issuer}/challenge`)
      const fetched = await app.inject({ method: 'POST', url: `/issuers/${tenant}/challenge` })
      expect(fetched.statusCode).toBe(200)
      expect(fetched.headers['cache-control']).toBe('no-store')
      const { attestation_challenge: challenge } = fetched.json()
      expect(challenge).toEqual(expect.any(String))

      const withChallenge = await tokenRequest(await offer('pid'), await attestation({ pop: { challenge } }))
      expect(withChallenge.statusCode, withChallenge.body).toBe(200)
      // Every token answer hands out the next challenge.
      const next = withChallenge.headers['oauth-client-attestation-challenge'] as string
      expect(next).toEqual(expect.any(String))
      expect(
        (await tokenRequest(await offer('pid'), await attestation({ pop: { challenge: next } }))).statusCode,
      ).toBe(200)

      // PAR takes wallet attestations too: its answers (a refusal here) carry one as well.
      const pushed = await app.inject({
        method: 'POST',
        url: `/issuers/${tenant}/par`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: '',
      })
      expect(pushed.statusCode).toBe(400)
      expect(pushed.headers['oauth-client-attestation-challenge']).toEqual(expect.any(String))

      const forgedChallenge = `${challenge.split('.')[0]}.${'A'.repeat(24)}`
      const otherTenant = (await app.inject({ method: 'POST', url: `/issuers/${tenantB}/challenge` })).json()
        .attestation_challenge
      for (const [name, wrong] of Object.entries({
        forged: forgedChallenge,
        'of another tenant': otherTenant,
      })) {
        const code = await offer('pid')
        const refused = await tokenRequest(code, await attestation({ pop: { challenge: wrong } }))
        expect(refused.statusCode, name).toBe(400)
        expect(refused.json().error, name).toBe('use_attestation_challenge')
        const fresh = refused.headers['oauth-client-attestation-challenge'] as string
        // The refusal spends nothing: the same code with the fresh challenge is redeemed.
        const retried = await tokenRequest(code, await attestation({ pop: { challenge: fresh } }))
        expect(retried.statusCode, `${name}: ${retried.body}`).toBe(200)
      }
      try {
        // Two windows of 2 minutes later the first challenge is stale.
        clockSkewMs = 250_000
        const iat = Math.floor((Date.now() + clockSkewMs) / 1000)
        const stale = await tokenRequest(await offer('pid'), await attestation({ pop: { challenge, iat } }))
        expect(stale.json().error).toBe('use_attestation_challenge')
      } finally {
        clockSkewMs = 0
      }
    })

    it('I-48, S-60 / RFC 5280 §6.1, HAIP 4.5.1: x5c through an intermediate CA passes; each refused chain names its cause', async () => {
      const chained = await tokenRequest(await offer('pid'), await attestation({ from: viaIntermediate }))
      expect(chained.statusCode, chained.body).toBe(200)
      const anchor = { key: trusted.root, pem: trusted.rootPem }
      const oldKey = await keyPair()
      const oldLeaf = await certificate(oldKey, 'CN=Old Attester', { issuer: anchor, daysAgo: 40 })
      const notCaKey = await keyPair()
      const notCa = await certificate(notCaKey, 'CN=Not a CA', { issuer: anchor })
      const belowKey = await keyPair()
      const below = await certificate(belowKey, 'CN=Attester', { issuer: { key: notCaKey, pem: notCa } })
      const cases: [string, Record<string, string>, string][] = [
        [
          'self-signed copy of the anchor (same key and subject, new serial)',
          await attestation({ signer: trusted.root, x5c: [await selfSignedCopy(trusted)] }),
          'the x5c leaf is self-signed',
        ],
        [
          'expired leaf',
          await attestation({ signer: oldKey, x5c: [x5cEntry(oldLeaf)] }),
          'x5c certificate 0 is expired or not yet valid',
        ],
        [
          'intermediate without cA',
          await attestation({ signer: belowKey, x5c: [x5cEntry(below), x5cEntry(notCa)] }),
          'x5c certificate 1 is not a CA (basicConstraints cA)',
        ],
        [
          'anchor in x5c',
          await attestation({ x5c: [...trusted.x5c, x5cEntry(trusted.rootPem)] }),
          'x5c must not contain the trust anchor',
        ],
        [
          'untrusted attester',
          await attestation({ from: untrusted }),
          'x5c does not chain to a trusted wallet provider',
        ],
      ]
      for (const [name, headers, cause] of cases) {
        const response = await tokenRequest(await offer('pid'), headers)
        expect(response.statusCode, name).toBe(401)
        expect(response.json(), name).toStrictEqual({
          error: 'invalid_client',
          error_description: `the client attestation is refused: ${cause}`,
        })
      }
    })

    it('I-48 / ABCA 5.2: two OAuth-Client-Attestation-PoP headers are 401 invalid_client, named as such', async () => {
      const { 'oauth-client-attestation': jwt, 'oauth-client-attestation-pop': pop } = await attestation()
      const twice = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: [
          ['content-type', 'application/x-www-form-urlencoded'],
          ['oauth-client-attestation', jwt as string],
          ['oauth-client-attestation-pop', pop as string],
          ['oauth-client-attestation-pop', (await attestation())['oauth-client-attestation-pop'] as string],
        ],
        body: new URLSearchParams({ grant_type: PRE_AUTH, 'pre-authorized_code': await offer('pid') }),
      })
      expect(twice.status).toBe(401)
      expect(await twice.json()).toStrictEqual({
        error: 'invalid_client',
        error_description: 'exactly one OAuth-Client-Attestation-PoP header is allowed',
      })
    })

    it('I-45, I-48 / RFC 9449, ABCA with the oid4vc-ts wallet: DPoP (nonce retry) + wallet attestation, then a credential', async () => {
      const holder = await keyPair()
      const instance = await keyPair()
      const keys = new Map<string, KeyPair>([
        [holder.publicJwk.x as string, holder],
        [instance.publicJwk.x as string, instance],
        [trusted.leaf.publicJwk.x as string, trusted.leaf],
      ])
      const signJwt: CallbackContext['signJwt'] = async (signer, { header, payload }) => {
        const jwk = (signer as { publicJwk?: JWK }).publicJwk ?? trusted.leaf.publicJwk
        const key = keys.get(jwk.x as string) as KeyPair
        return { jwt: await sign(key, header as never, payload as never), signerJwk: jwk as never }
      }
      const callbacks = {
        hash: (data: Uint8Array, alg: string) =>
          new Uint8Array(createHash(alg.replace('-', '').toLowerCase()).update(data).digest()),
        generateRandom: (length: number) => new Uint8Array(randomBytes(length)),
        signJwt,
      }
      const clientAttestationJwt = await createClientAttestationJwt({
        issuer: 'https://wallet.example.com',
        clientId: 'oid4vc-ts-wallet',
        expiresAt: new Date(Date.now() + 600_000),
        confirmation: { jwk: instance.publicJwk as never },
        callbacks,
        signer: { method: 'x5c', alg: 'ES256', x5c: trusted.x5c },
      })
      const wallet = new Openid4vciClient({
        callbacks: {
          ...callbacks,
          clientAuthentication: clientAuthenticationClientAttestationJwt({ clientAttestationJwt, callbacks }),
        } as never,
      })
      const code = await offer('haip')
      const credentialOffer = await wallet.resolveCredentialOffer(
        `openid-credential-offer://?credential_offer=${encodeURIComponent(
          JSON.stringify({
            credential_issuer: issuer,
            credential_configuration_ids: ['haip'],
            grants: { [PRE_AUTH]: { 'pre-authorized_code': code } },
          }),
        )}`,
      )
      const issuerMetadata = await wallet.resolveIssuerMetadata(credentialOffer.credential_issuer)
      const signer = { method: 'jwk' as const, alg: 'ES256', publicJwk: holder.publicJwk as never }
      const { accessTokenResponse, dpop: dpopState } =
        await wallet.retrievePreAuthorizedCodeAccessTokenFromOffer({
          credentialOffer,
          issuerMetadata,
          dpop: { signer },
        })
      expect(accessTokenResponse.token_type).toBe('DPoP')
      expect(decodeJwt(accessTokenResponse.access_token)).toMatchObject({ cnf: { jkt: holder.jkt } })
      const { c_nonce } = await wallet.requestNonce({ issuerMetadata })
      const { jwt } = await wallet.createCredentialRequestJwtProof({
        issuerMetadata,
        credentialConfigurationId: 'haip',
        nonce: c_nonce,
        signer,
      })
      const result = await wallet.retrieveCredentials({
        issuerMetadata,
        accessToken: accessTokenResponse.access_token,
        credentialConfigurationId: 'haip',
        proofs: { jwt: [jwt] },
        dpop: { signer, ...(dpopState?.nonce ? { nonce: dpopState.nonce } : {}) },
      })
      expect(result.credentialResponse.credentials).toHaveLength(1)
    })
  },
)

describe('DPOP_NONCE_REQUIRED=false (RFC 9449 §8: nonces are the server’s choice)', () => {
  let app: FastifyInstance
  let tenant: string
  const baseUrl = 'http://localhost:3000'

  beforeAll(async () => {
    const database = testDatabases()[0] as TestDatabase
    // The `haip` world for its tenant a's `pid`; the wallet providers' anchors are of no wallet here.
    const anchor = (await attester('Unused Wallet')).rootPem
    const started = await startAllInOneWorld(database, 'haip', baseUrl, {
      DPOP_NONCE_REQUIRED: 'false',
      TRUSTED_WALLET_ANCHOR: anchor,
      CHAINED_WALLET_ANCHOR: anchor,
      B_WALLET_ANCHOR: anchor,
    })
    app = started.app
    tenant = started.tenants.a.id
    const offer = await app.inject({
      method: 'POST',
      url: '/api/offers',
      headers: started.tenants.a.auth,
      payload: { credentialConfigurationIds: ['pid'], claims: { pid: { given_name: 'Erika' } } },
    })
    code = offer.json().credentialOffer.grants[PRE_AUTH]['pre-authorized_code']
  }, 60_000)
  afterAll(() => app?.close())
  let code: string

  it('I-47: a proof without nonce is accepted, and no DPoP-Nonce header is sent', async () => {
    const key = await keyPair()
    const proof = await sign(
      key,
      { typ: 'dpop+jwt', jwk: key.publicJwk },
      {
        htm: 'POST',
        htu: `${baseUrl}/issuers/${tenant}/token`,
        iat: Math.floor(Date.now() / 1000),
        jti: 'j1',
      },
    )
    const response = await app.inject({
      method: 'POST',
      url: `/issuers/${tenant}/token`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
      payload: new URLSearchParams({ grant_type: PRE_AUTH, 'pre-authorized_code': code }).toString(),
    })
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json().token_type).toBe('DPoP')
    expect(response.headers['dpop-nonce']).toBeUndefined()
  })
})
