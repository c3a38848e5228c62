import { createHash, randomBytes } from 'node:crypto'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import {
  type CallbackContext,
  clientAuthenticationClientAttestationJwt,
  clientAuthenticationNone,
  createClientAttestationJwt,
  setGlobalConfig,
} from '@openid4vc/oauth2'
import { Openid4vciClient } from '@openid4vc/openid4vci'
import type { FastifyInstance } from 'fastify'
import { decodeJwt, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { attester, type KeyPair, keyPair, sign } from './attestation-fixtures'
import { freePort } from './free-port'
import { startAllInOneWorld } from './harness'
import { presentOverHttp } from './wallet'

// The wallet is oid4vc-ts (an independent library) over real HTTP on 127.0.0.1.
setGlobalConfig({ allowInsecureUrls: true })

const REDIRECT = 'https://wallet.example/cb'
const CLIENT_ID = 'haip-wallet'
const VCT = 'urn:example:haip:1'

// biome-ignore lint/suspicious/noExplicitAny: tests read loosely typed JSON answers
type Json = any

/** One HTTP exchange of the wallet, as it went over the wire. */
interface Exchange {
  url: string
  method: string
  headers: Headers
  body: string
  status: number
  answer: Json
}

describe.each(testDatabases())(
  'HAIP issuance end to end with the oid4vc-ts wallet (auth code + PAR + PKCE + DPoP + wallet attestation + status) on $name',
  (testDatabase) => {
    let app: FastifyInstance
    let baseUrl: string
    let admin: Record<string, string>
    let trusted: Awaited<ReturnType<typeof attester>>
    let tenant: string
    const issuer = () => `${baseUrl}/issuers/${tenant}`

    const call = async (method: string, path: string, body?: unknown, headers = admin) => {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      const text = await response.text()
      return { status: response.status, body: (text ? JSON.parse(text) : null) as Json }
    }

    beforeAll(async () => {
      const port = await freePort()
      baseUrl = `http://127.0.0.1:${port}`
      trusted = await attester('HAIP Wallet')
      // The `haip` world (test/worlds/haip): tenant a's `haip` requires DPoP, a wallet attestation
      // from `trusted` and status entries; `haip-open` requires neither; `haip-check` asks for `haip`.
      // Our own verifier fetches our own status lists: plain http to this test host is allowed.
      const started = await startAllInOneWorld(testDatabase as TestDatabase, 'haip', baseUrl, {
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
        // A change of status is refused at the next presentation, not after the list's ttl: no
        // cache (packages/server-kit/src/presentation/status-list.test.ts tests it).
        STATUS_LIST_CACHE_MAX_SECONDS: '0',
        TRUSTED_WALLET_ANCHOR: trusted.rootPem,
        CHAINED_WALLET_ANCHOR: (await attester('Chained Wallet', { intermediate: true })).rootPem,
        B_WALLET_ANCHOR: (await attester('Wallet of B')).rootPem,
      })
      app = started.app
      await app.listen({ host: '127.0.0.1', port })
      tenant = started.tenants.a.id
      admin = started.tenants.a.auth
    }, 60_000)
    afterAll(() => app?.close())

    /**
     * An oid4vc-ts wallet: a holder key for the credential, a DPoP key, and (when `attested`) a wallet
     * attestation from the trusted provider as client authentication. Every exchange is recorded.
     */
    async function walletFor(options: { attested: boolean }) {
      const holder = await generateKeyPair('ES256', { extractable: true })
      const holderJwk = (await exportJWK(holder.publicKey)) as JWK
      const dpopKey = await keyPair()
      const instance = await keyPair()
      const signers = new Map<string, (header: Json, payload: Json) => Promise<string>>([
        [
          holderJwk.x as string,
          (header, payload) => new SignJWT(payload).setProtectedHeader(header).sign(holder.privateKey),
        ],
        [trusted.leaf.publicJwk.x as string, (h, p) => sign(trusted.leaf, h, p)],
      ])
      const addKey = (key: KeyPair) => signers.set(key.publicJwk.x as string, (h, p) => sign(key, h, p))
      addKey(dpopKey)
      addKey(instance)
      const signJwt: CallbackContext['signJwt'] = async (signer, { header, payload }) => {
        // The attestation itself is signed with the x5c of the provider's attester certificate.
        const jwk = (signer as { publicJwk?: JWK }).publicJwk ?? trusted.leaf.publicJwk
        const sign = signers.get(jwk.x as string)
        if (!sign) throw new Error('unknown signing key')
        return { jwt: await sign(header, payload), signerJwk: jwk as never }
      }
      const exchanges: Exchange[] = []
      const recording: typeof fetch = async (input, init) => {
        const response = await fetch(input, init)
        const text = await response.clone().text()
        let answer: Json = text
        try {
          answer = JSON.parse(text)
        } catch {}
        exchanges.push({
          url: String(input),
          method: init?.method ?? 'GET',
          headers: new Headers(init?.headers),
          body: typeof init?.body === 'string' ? init.body : String(init?.body ?? ''),
          status: response.status,
          answer,
        })
        return response
      }
      const callbacks = {
        hash: (data: Uint8Array, alg: string) =>
          new Uint8Array(createHash(alg.replace('-', '').toLowerCase()).update(data).digest()),
        generateRandom: (length: number) => new Uint8Array(randomBytes(length)),
        signJwt,
        fetch: recording,
      }
      const clientAttestationJwt = await createClientAttestationJwt({
        issuer: 'https://wallet.example.com',
        clientId: CLIENT_ID,
        expiresAt: new Date(Date.now() + 600_000),
        confirmation: { jwk: instance.publicJwk as never },
        callbacks,
        signer: { method: 'x5c', alg: 'ES256', x5c: trusted.x5c },
      })
      const attested = clientAuthenticationClientAttestationJwt({ clientAttestationJwt, callbacks })
      const client = (clientAuthentication: CallbackContext['clientAuthentication']) =>
        new Openid4vciClient({ callbacks: { ...callbacks, clientAuthentication } as never })
      return {
        client: client(options.attested ? attested : clientAuthenticationNone({ clientId: CLIENT_ID })),
        /** The same wallet without its attestation (for the token request only). */
        unattested: client(clientAuthenticationNone({ clientId: CLIENT_ID })),
        holder,
        holderSigner: { method: 'jwk' as const, alg: 'ES256', publicJwk: holderJwk as never },
        dpopKey,
        /** Lets the wallet sign with another key (a DPoP key of its own choosing). */
        addKey,
        dpopSigner: (key: KeyPair) => ({
          method: 'jwk' as const,
          alg: 'ES256',
          publicJwk: key.publicJwk as never,
        }),
        exchanges,
        /** The exchanges with one endpoint of the issuer, in order. */
        at: (endpoint: string) => exchanges.filter((e) => e.url.split('?')[0] === `${issuer()}/${endpoint}`),
      }
    }
    type Wallet = Awaited<ReturnType<typeof walletFor>>

    /**
     * Offer by reference with the authorization_code grant, then PAR (attestation + DPoP), /authorize
     * followed with fetch (manual redirect), and the verified authorization response: the code.
     */
    async function authorize(wallet: Wallet, configurationId = 'haip') {
      const created = await call('POST', '/api/offers', {
        credentialConfigurationIds: [configurationId],
        grant: 'authorization_code',
        byReference: true,
        claims: { [configurationId]: { given_name: 'Erika' } },
      })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      const credentialOffer = await wallet.client.resolveCredentialOffer(created.body.offerUri)
      const issuerMetadata = await wallet.client.resolveIssuerMetadata(credentialOffer.credential_issuer)
      const started = await wallet.client.createAuthorizationRequestUrlFromOffer({
        clientId: CLIENT_ID,
        issuerMetadata,
        credentialOffer,
        redirectUri: REDIRECT,
        scope: issuerMetadata.credentialIssuer.credential_configurations_supported[configurationId]
          ?.scope as string,
        dpop: { signer: wallet.dpopSigner(wallet.dpopKey) },
      })
      const redirect = await fetch(started.authorizationRequestUrl, { redirect: 'manual' })
      expect(redirect.status).toBe(303)
      const response = wallet.client.parseAndVerifyAuthorizationResponseRedirectUrl({
        url: redirect.headers.get('location') as string,
        authorizationServerMetadata: issuerMetadata.authorizationServers[0] as never,
      })
      return {
        sessionId: created.body.sessionId as string,
        credentialOffer,
        issuerMetadata,
        code: response.code as string,
        iss: response.iss,
        codeVerifier: started.pkce?.codeVerifier as string,
        dpop: started.dpop,
      }
    }

    /** Presents the credential to our own verifier over HTTP (OpenID4VP); answers the session. */
    async function verify(wallet: Wallet, credential: string) {
      const request = await call('POST', '/api/presentation-requests', { presentationConfigId: 'haip-check' })
      expect(request.status).toBe(201)
      await presentOverHttp({
        requestUri: request.body.requestUri,
        credentialQueryId: 'haip',
        credential,
        holder: wallet.holder,
        disclose: { given_name: true },
      })
      return (await call('GET', `/api/sessions/${request.body.sessionId}`)).body
    }

    it('OpenID4VCI §5-§8, RFC 9126 §2, RFC 7636, RFC 9449 §5-§10, ABCA §5, HAIP §4, TSL §8.3 (I-30, I-34, I-38, I-45, I-46, I-48, V-33): code flow to a credential our verifier accepts, then refuses once revoked', async () => {
      const wallet = await walletFor({ attested: true })
      const flow = await authorize(wallet)
      expect(flow.iss).toBe(issuer())

      // I-30, I-34, I-38, I-48: PAR carried PKCE S256, the attestation with its PoP, and a DPoP proof.
      const pushed = wallet.at('par')
      const parDone = pushed.at(-1) as Exchange
      expect(parDone.status).toBe(201)
      expect(parDone.answer.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:/)
      expect(parDone.headers.get('oauth-client-attestation')).toEqual(expect.any(String))
      expect(parDone.headers.get('oauth-client-attestation-pop')).toEqual(expect.any(String))
      expect(decodeJwt(parDone.headers.get('dpop') as string).htu).toBe(`${issuer()}/par`)
      const parForm = new URLSearchParams(parDone.body)
      expect(parForm.get('code_challenge_method')).toBe('S256')
      expect(parForm.get('issuer_state')).toEqual(expect.any(String))
      // The first PAR without a server nonce was told use_dpop_nonce, and the library retried.
      expect(pushed.map((e) => e.status)).toStrictEqual([400, 201])
      expect(flow.dpop?.nonce).toEqual(expect.any(String))

      // I-45, I-46: token with code + verifier + DPoP of the same key; DPoP-bound.
      const { accessTokenResponse, dpop } = await wallet.client.retrieveAuthorizationCodeAccessTokenFromOffer(
        {
          issuerMetadata: flow.issuerMetadata,
          credentialOffer: flow.credentialOffer,
          authorizationCode: flow.code,
          pkceCodeVerifier: flow.codeVerifier,
          redirectUri: REDIRECT,
          dpop: flow.dpop,
        },
      )
      expect(accessTokenResponse.token_type).toBe('DPoP')
      expect(decodeJwt(accessTokenResponse.access_token)).toMatchObject({
        cnf: { jkt: wallet.dpopKey.jkt },
        wallet_provider: 'trusted',
        client_id: CLIENT_ID,
      })
      const tokenDone = wallet.at('token').at(-1) as Exchange
      expect(tokenDone.headers.get('oauth-client-attestation')).toEqual(expect.any(String))
      expect(new URLSearchParams(tokenDone.body).get('code_verifier')).toBe(flow.codeVerifier)

      const { c_nonce } = await wallet.client.requestNonce({ issuerMetadata: flow.issuerMetadata })
      const { jwt } = await wallet.client.createCredentialRequestJwtProof({
        issuerMetadata: flow.issuerMetadata,
        credentialConfigurationId: 'haip',
        nonce: c_nonce,
        signer: wallet.holderSigner,
      })
      const result = await wallet.client.retrieveCredentials({
        issuerMetadata: flow.issuerMetadata,
        accessToken: accessTokenResponse.access_token,
        credentialConfigurationId: 'haip',
        proofs: { jwt: [jwt] },
        dpop: { signer: wallet.dpopSigner(wallet.dpopKey), ...(dpop?.nonce ? { nonce: dpop.nonce } : {}) },
      })
      const credentialDone = wallet.at('credential').at(-1) as Exchange
      expect(credentialDone.headers.get('authorization')).toMatch(/^DPoP /)
      const credential = (result.credentialResponse.credentials as { credential: string }[])[0]
        ?.credential as string
      const payload = decodeJwt(credential.split('~')[0] as string) as Json
      expect(payload.vct).toBe(VCT)
      expect(payload.cnf.jwk).toMatchObject({ x: (wallet.holderSigner.publicJwk as JWK).x })
      expect(payload.status.status_list).toStrictEqual({ idx: expect.any(Number), uri: expect.any(String) })

      // V-33: our verifier accepts it, then refuses it once the issuance session is revoked.
      expect(await verify(wallet, credential)).toMatchObject({ status: 'verified', failureReason: null })
      const revoked = await call('POST', `/api/sessions/${flow.sessionId}/status`, { status: 'revoked' })
      expect(revoked).toStrictEqual({ status: 200, body: { status: 'revoked', credentials: 1, changed: 1 } })
      expect(await verify(wallet, credential)).toMatchObject({
        status: 'failed',
        failureReason: 'the credential is revoked (INVALID)',
      })
    })

    it('ABCA §5, HAIP §4.4.1 (I-48): an attested PAR followed by a token request without the attestation is 401 invalid_client and spends nothing', async () => {
      const wallet = await walletFor({ attested: true })
      const flow = await authorize(wallet)
      await expect(
        wallet.unattested.retrieveAuthorizationCodeAccessTokenFromOffer({
          issuerMetadata: flow.issuerMetadata,
          credentialOffer: flow.credentialOffer,
          authorizationCode: flow.code,
          pkceCodeVerifier: flow.codeVerifier,
          redirectUri: REDIRECT,
          dpop: flow.dpop,
        }),
      ).rejects.toThrow()
      const refused = wallet.at('token').at(-1) as Exchange
      expect(refused.headers.get('oauth-client-attestation')).toBeNull()
      expect(refused.headers.get('dpop')).toEqual(expect.any(String))
      expect(refused.status).toBe(401)
      expect(refused.answer.error).toBe('invalid_client')
      // The refusal spent nothing: the session is still open, and the attested wallet redeems the code.
      expect((await call('GET', `/api/sessions/${flow.sessionId}`)).body.status).not.toBe('token_issued')
      const { accessTokenResponse } = await wallet.client.retrieveAuthorizationCodeAccessTokenFromOffer({
        issuerMetadata: flow.issuerMetadata,
        credentialOffer: flow.credentialOffer,
        authorizationCode: flow.code,
        pkceCodeVerifier: flow.codeVerifier,
        redirectUri: REDIRECT,
        dpop: flow.dpop,
      })
      expect(accessTokenResponse.token_type).toBe('DPoP')
      expect((await call('GET', `/api/sessions/${flow.sessionId}`)).body.status).toBe('token_issued')
    })

    it('RFC 9126 §2.1, ABCA §5, HAIP §4.3 (I-30, I-48): PAR for a configuration with walletAttestation "required" without an attestation is 401 invalid_client', async () => {
      const wallet = await walletFor({ attested: false })
      await expect(authorize(wallet)).rejects.toThrow()
      const refused = wallet.at('par').at(-1) as Exchange
      expect(refused.headers.get('oauth-client-attestation')).toBeNull()
      expect(refused.status).toBe(401)
      expect(refused.answer.error).toBe('invalid_client')
      expect(wallet.at('authorize')).toStrictEqual([])
    })

    it('ABCA §5, HAIP §4.3 (I-48): a code pushed with a wallet attestation needs the attestation at the token endpoint too, even when no configuration requires one', async () => {
      const wallet = await walletFor({ attested: true })
      const flow = await authorize(wallet, 'haip-open')
      const redeem = (client: Wallet['client']) =>
        client.retrieveAuthorizationCodeAccessTokenFromOffer({
          issuerMetadata: flow.issuerMetadata,
          credentialOffer: flow.credentialOffer,
          authorizationCode: flow.code,
          pkceCodeVerifier: flow.codeVerifier,
          redirectUri: REDIRECT,
          dpop: flow.dpop,
        })
      await expect(redeem(wallet.unattested)).rejects.toThrow()
      const refused = wallet.at('token').at(-1) as Exchange
      expect(refused.headers.get('oauth-client-attestation')).toBeNull()
      expect(refused.status).toBe(401)
      expect(refused.answer.error).toBe('invalid_client')
      // RFC 6749 §4.1.3: a failed binding check uses the code up.
      await expect(redeem(wallet.client)).rejects.toThrow()
      expect((wallet.at('token').at(-1) as Exchange).answer.error).toBe('invalid_grant')
      expect((await call('GET', `/api/sessions/${flow.sessionId}`)).body.status).not.toBe('token_issued')
    })

    it('RFC 9449 §10, §5 (I-38, I-46): a token request whose DPoP key differs from the one at PAR is invalid_dpop_proof', async () => {
      const wallet = await walletFor({ attested: true })
      const flow = await authorize(wallet)
      const other = await keyPair()
      wallet.addKey(other)
      await expect(
        wallet.client.retrieveAuthorizationCodeAccessTokenFromOffer({
          issuerMetadata: flow.issuerMetadata,
          credentialOffer: flow.credentialOffer,
          authorizationCode: flow.code,
          pkceCodeVerifier: flow.codeVerifier,
          redirectUri: REDIRECT,
          dpop: { signer: wallet.dpopSigner(other), ...(flow.dpop?.nonce ? { nonce: flow.dpop.nonce } : {}) },
        }),
      ).rejects.toThrow()
      const refused = wallet.at('token').at(-1) as Exchange
      expect(decodeJwt(refused.headers.get('dpop') as string)).toMatchObject({ htu: `${issuer()}/token` })
      expect(refused.headers.get('oauth-client-attestation')).toEqual(expect.any(String))
      expect(refused.status).toBe(400)
      expect(refused.answer.error).toBe('invalid_dpop_proof')
    })

    it('RFC 9449 §7.2, HAIP §4 (I-45, S-31): the DPoP-bound access token of the code flow sent as Bearer is 401 invalid_token', async () => {
      const wallet = await walletFor({ attested: true })
      const flow = await authorize(wallet)
      const { accessTokenResponse } = await wallet.client.retrieveAuthorizationCodeAccessTokenFromOffer({
        issuerMetadata: flow.issuerMetadata,
        credentialOffer: flow.credentialOffer,
        authorizationCode: flow.code,
        pkceCodeVerifier: flow.codeVerifier,
        redirectUri: REDIRECT,
        dpop: flow.dpop,
      })
      expect(accessTokenResponse.token_type).toBe('DPoP')
      const { c_nonce } = await wallet.client.requestNonce({ issuerMetadata: flow.issuerMetadata })
      const { jwt } = await wallet.client.createCredentialRequestJwtProof({
        issuerMetadata: flow.issuerMetadata,
        credentialConfigurationId: 'haip',
        nonce: c_nonce,
        signer: wallet.holderSigner,
      })
      // Without dpop options the library sends the token with the Bearer scheme.
      await expect(
        wallet.client.retrieveCredentials({
          issuerMetadata: flow.issuerMetadata,
          accessToken: accessTokenResponse.access_token,
          credentialConfigurationId: 'haip',
          proofs: { jwt: [jwt] },
        }),
      ).rejects.toThrow()
      const refused = wallet.at('credential').at(-1) as Exchange
      expect(refused.headers.get('authorization')).toBe(`Bearer ${accessTokenResponse.access_token}`)
      expect(refused.status).toBe(401)
      expect(refused.answer.error).toBe('invalid_token')
    })
  },
)
