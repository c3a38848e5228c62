import { createHash, randomBytes } from 'node:crypto'
import { x5cEntry } from '@credential-service/crypto'
import { anchorsTrustListId } from '@credential-service/db-schema'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { type CallbackContext, clientAuthenticationNone, setGlobalConfig } from '@openid4vc/oauth2'
import { Openid4vciClient } from '@openid4vc/openid4vci'
import type { FastifyInstance } from 'fastify'
import { decodeJwt, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { attester, type KeyPair, keyPair, selfSignedCopy, sign } from './attestation-fixtures'
import { freePort } from './free-port'
import { startAllInOneWorld } from './harness'

setGlobalConfig({ allowInsecureUrls: true })

const PRE_AUTH = 'urn:ietf:params:oauth:grant-type:pre-authorized_code'
const HIGH = 'iso_18045_high'

describe.each(testDatabases())(
  'key attestation (OpenID4VCI 1.0 Appendix D, F.1, F.3) on $name',
  (testDatabase) => {
    let app: FastifyInstance
    let baseUrl: string
    let issuer: string
    let admin: Record<string, string>
    let tenant: string
    /** Another tenant, with its own wallet provider. */
    let tenantB: string
    let adminB: Record<string, string>
    let trusted: Awaited<ReturnType<typeof attester>>

    beforeAll(async () => {
      const port = await freePort()
      baseUrl = `http://127.0.0.1:${port}`
      trusted = await attester('Trusted Wallet')
      // The `key-attestation` world (test/worlds/key-attestation): tenant a trusts `trusted`,
      // tenant b only a wallet provider of its own.
      const started = await startAllInOneWorld(testDatabase as TestDatabase, 'key-attestation', baseUrl, {
        TRUSTED_WALLET_ANCHOR: trusted.rootPem,
        B_WALLET_ANCHOR: (await attester('Wallet of B')).rootPem,
      })
      app = started.app
      await app.listen({ host: '127.0.0.1', port })
      tenant = started.tenants.a.id
      tenantB = started.tenants.b.id
      admin = started.tenants.a.auth
      adminB = started.tenants.b.auth
      issuer = `${baseUrl}/issuers/${tenant}`
    }, 60_000)
    afterAll(() => app?.close())

    async function accessToken(configurationId: string, at = tenant): Promise<string> {
      const created = await app.inject({
        method: 'POST',
        url: '/api/offers',
        headers: at === tenant ? admin : adminB,
        payload: {
          credentialConfigurationIds: [configurationId],
          claims: { [configurationId]: { given_name: 'Erika' } },
        },
      })
      const code = created.json().credentialOffer.grants[PRE_AUTH]['pre-authorized_code']
      const response = await app.inject({
        method: 'POST',
        url: `/issuers/${at}/token`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ grant_type: PRE_AUTH, 'pre-authorized_code': code }).toString(),
      })
      return response.json().access_token
    }

    const cNonce = async (at = tenant) =>
      (await app.inject({ method: 'POST', url: `/issuers/${at}/nonce` })).json().c_nonce as string

    async function keyAttestation(
      keys: KeyPair[],
      options: {
        nonce?: string
        x5c?: string[]
        signer?: KeyPair
        omit?: string[]
        keyStorage?: string[]
        userAuthentication?: string[]
        typ?: string
        iat?: number
        exp?: number
        /** attested_keys as sent, instead of the public keys of `keys`. */
        attestedKeys?: unknown[]
      } = {},
    ) {
      const now = Math.floor(Date.now() / 1000)
      const payload: Record<string, unknown> = {
        iat: options.iat ?? now,
        exp: options.exp ?? now + 600,
        attested_keys: options.attestedKeys ?? keys.map((key) => key.publicJwk),
        key_storage: options.keyStorage ?? [HIGH],
        user_authentication: options.userAuthentication ?? [HIGH],
        ...(options.nonce ? { nonce: options.nonce } : {}),
      }
      for (const name of options.omit ?? []) delete payload[name]
      return sign(
        options.signer ?? trusted.leaf,
        { typ: options.typ ?? 'key-attestation+jwt', x5c: options.x5c ?? trusted.x5c },
        payload,
      )
    }

    async function jwtProof(key: KeyPair, nonce: string, attestationJwt?: string, aud = issuer) {
      return sign(
        key,
        {
          typ: 'openid4vci-proof+jwt',
          jwk: key.publicJwk,
          ...(attestationJwt ? { key_attestation: attestationJwt } : {}),
        },
        { aud, iat: Math.floor(Date.now() / 1000), nonce },
      )
    }

    const credential = (
      token: string,
      proofs: Record<string, unknown>,
      configurationId = 'attested',
      at = tenant,
    ) =>
      app.inject({
        method: 'POST',
        url: `/issuers/${at}/credential`,
        headers: { authorization: `Bearer ${token}` },
        payload: { credential_configuration_id: configurationId, proofs },
      })

    const boundKeys = (credentials: { credential: string }[]) =>
      credentials.map(
        ({ credential }) => (decodeJwt(credential.split('~')[0] as string).cnf as { jwk: JWK }).jwk.x,
      )

    it('I-09 / OpenID4VCI 1.0 §12.2.4: key_attestations_required and the attestation proof type only where configured', async () => {
      const metadata = (
        await app.inject({ url: `/.well-known/openid-credential-issuer/issuers/${tenant}` })
      ).json()
      const supported = metadata.credential_configurations_supported
      expect(supported.attested.proof_types_supported).toStrictEqual({
        jwt: {
          proof_signing_alg_values_supported: ['ES256', 'ES384', 'Ed25519'],
          key_attestations_required: { key_storage: [HIGH], user_authentication: [HIGH] },
        },
        attestation: {
          proof_signing_alg_values_supported: ['ES256', 'ES384', 'Ed25519'],
          key_attestations_required: { key_storage: [HIGH], user_authentication: [HIGH] },
        },
      })
      expect(supported.plain.proof_types_supported).toStrictEqual({
        jwt: { proof_signing_alg_values_supported: ['ES256', 'ES384', 'Ed25519'] },
      })
    })

    it('I-65 / Appendix F.1 with the oid4vc-ts wallet: a jwt proof with key_attestation gets one credential per attested key', async () => {
      const [first, second] = [await keyPair(), await keyPair()] as [KeyPair, KeyPair]
      const signJwt: CallbackContext['signJwt'] = async (_signer, { header, payload }) => ({
        jwt: await sign(first, header as never, payload as never),
        signerJwk: first.publicJwk as never,
      })
      const wallet = new Openid4vciClient({
        callbacks: {
          clientAuthentication: clientAuthenticationNone({ clientId: 'wallet' }),
          hash: (data, alg) => new Uint8Array(createHash(alg.replace('-', '')).update(data).digest()),
          generateRandom: (length) => new Uint8Array(randomBytes(length)),
          signJwt,
        },
      })
      const issuerMetadata = await wallet.resolveIssuerMetadata(issuer)
      const { c_nonce } = await wallet.requestNonce({ issuerMetadata })
      const { jwt } = await wallet.createCredentialRequestJwtProof({
        issuerMetadata,
        credentialConfigurationId: 'attested',
        nonce: c_nonce,
        signer: { method: 'jwk', alg: 'ES256', publicJwk: first.publicJwk as never },
        keyAttestationJwt: await keyAttestation([first, second]),
      })
      const result = await wallet.retrieveCredentials({
        issuerMetadata,
        accessToken: await accessToken('attested'),
        credentialConfigurationId: 'attested',
        proofs: { jwt: [jwt] },
      })
      const credentials = result.credentialResponse.credentials as { credential: string }[]
      expect(boundKeys(credentials)).toStrictEqual([first.publicJwk.x, second.publicJwk.x])
    })

    it('I-65 / Appendix F.3: the attestation proof type issues per attested key; its c_nonce is used once', async () => {
      const keys = [await keyPair(), await keyPair()]
      const nonce = await cNonce()
      const attestationJwt = await keyAttestation(keys, { nonce })
      const response = await credential(await accessToken('attested'), { attestation: [attestationJwt] })
      expect(response.statusCode, response.body).toBe(200)
      expect(boundKeys(response.json().credentials)).toStrictEqual(keys.map((key) => key.publicJwk.x))
      const replay = await credential(await accessToken('attested'), { attestation: [attestationJwt] })
      expect(replay.json().error).toBe('invalid_nonce')
      const plain = await credential(await accessToken('plain'), { attestation: [attestationJwt] }, 'plain')
      expect(plain.json().error, 'not configured').toBe('invalid_proof')
    })

    it('S-65 / Appendix D.1, HAIP 4.5.1: bad key attestations and proofs by other keys are invalid_proof', async () => {
      const token = await accessToken('attested')
      const holder = await keyPair()
      const stranger = await keyPair()
      const untrusted = await attester('Unknown')
      const cases: Record<string, (nonce: string) => Promise<string>> = {
        'bad signature': async (nonce) => {
          const [h, p] = (await keyAttestation([holder])).split('.')
          return jwtProof(holder, nonce, `${h}.${p}.${'A'.repeat(86)}`)
        },
        'untrusted wallet provider': async (nonce) =>
          jwtProof(
            holder,
            nonce,
            await keyAttestation([holder], { signer: untrusted.leaf, x5c: untrusted.x5c }),
          ),
        'self-signed certificate (a copy of the anchor)': async (nonce) =>
          jwtProof(
            holder,
            nonce,
            await keyAttestation([holder], { signer: trusted.root, x5c: [await selfSignedCopy(trusted)] }),
          ),
        'anchor in x5c': async (nonce) =>
          jwtProof(
            holder,
            nonce,
            await keyAttestation([holder], { x5c: [...trusted.x5c, x5cEntry(trusted.rootPem)] }),
          ),
        'proof signed by a key not attested': async (nonce) =>
          jwtProof(stranger, nonce, await keyAttestation([holder])),
        'typ JWT': async (nonce) => jwtProof(holder, nonce, await keyAttestation([holder], { typ: 'JWT' })),
        'no exp in a jwt proof': async (nonce) =>
          jwtProof(holder, nonce, await keyAttestation([holder], { omit: ['exp'] })),
        'empty attested_keys': async (nonce) => jwtProof(holder, nonce, await keyAttestation([])),
        'key_storage below policy': async (nonce) =>
          jwtProof(holder, nonce, await keyAttestation([holder], { keyStorage: ['iso_18045_basic'] })),
        'required but absent': async (nonce) => jwtProof(holder, nonce),
      }
      const causes: Record<string, string> = {
        'bad signature': 'the key attestation is refused: signature verification failed',
        'untrusted wallet provider':
          'the key attestation is refused: x5c does not chain to a trusted wallet provider',
        'self-signed certificate (a copy of the anchor)':
          'the key attestation is refused: the x5c leaf is self-signed',
        'anchor in x5c': 'the key attestation is refused: x5c must not contain the trust anchor',
      }
      for (const [name, proof] of Object.entries(cases)) {
        const response = await credential(token, { jwt: [await proof(await cNonce())] })
        expect(response.statusCode, name).toBe(400)
        expect(response.json().error, name).toBe('invalid_proof')
        if (causes[name]) expect(response.json().error_description, name).toBe(causes[name])
      }
      const otherNonce = await keyAttestation([holder], { nonce: await cNonce() })
      const mismatch = await credential(token, { jwt: [await jwtProof(holder, await cNonce(), otherNonce)] })
      expect(mismatch.json().error, 'attestation nonce ≠ c_nonce').toBe('invalid_nonce')
      // After all the refusals the same token still gets its credential.
      const ok = await credential(token, {
        jwt: [await jwtProof(holder, await cNonce(), await keyAttestation([holder]))],
      })
      expect(ok.statusCode, ok.body).toBe(200)
    })

    it('I-65, S-11 / Appendix F.3, JWTBCP 3.4: attested_keys off the curve or of a type no proof alg has are invalid_proof; Ed25519 is bound', async () => {
      const p256 = (await keyPair()).publicJwk
      const cases: Record<string, [unknown, string]> = {
        'S-11 EC point off the curve': [{ ...p256, y: p256.x }, 'attested_keys must hold valid public keys'],
        'EC P-256 with a short x': [{ ...p256, x: 'AAAA' }, 'attested_keys must hold valid public keys'],
        RSA: [
          (await keyPair('RS256')).publicJwk,
          'attested_keys must be EC P-256, EC P-384 or OKP Ed25519 keys',
        ],
        'EC P-521': [
          (await keyPair('ES512')).publicJwk,
          'attested_keys must be EC P-256, EC P-384 or OKP Ed25519 keys',
        ],
        'OKP X25519': [
          { kty: 'OKP', crv: 'X25519', x: p256.x },
          'attested_keys must be EC P-256, EC P-384 or OKP Ed25519 keys',
        ],
      }
      const token = await accessToken('attested')
      for (const [name, [key, description]] of Object.entries(cases)) {
        const attestationJwt = await keyAttestation([], { nonce: await cNonce(), attestedKeys: [key] })
        const response = await credential(token, { attestation: [attestationJwt] })
        expect(response.statusCode, name).toBe(400)
        expect(response.json(), name).toStrictEqual({
          error: 'invalid_proof',
          error_description: description,
        })
      }
      const ed25519 = await keyPair('Ed25519')
      const bound = await credential(token, {
        attestation: [await keyAttestation([ed25519], { nonce: await cNonce() })],
      })
      expect(bound.statusCode, bound.body).toBe(200)
      expect(boundKeys(bound.json().credentials)).toStrictEqual([ed25519.publicJwk.x])
    })

    it('I-65 / Appendix D.1, F.3: exp in the past, iat in the future and user_authentication below policy are invalid_proof; more attested keys than batch_size is invalid_credential_request', async () => {
      const token = await accessToken('attested')
      const holder = await keyPair()
      const now = Math.floor(Date.now() / 1000)
      const cases: Record<string, [Parameters<typeof keyAttestation>[1], string]> = {
        'exp in the past': [
          { exp: now - 60 },
          "the key attestation is refused: 'exp' claim timestamp check failed",
        ],
        'iat in the future': [{ iat: now + 3600 }, 'the key attestation iat is missing or in the future'],
        'user_authentication below policy': [
          { userAuthentication: ['iso_18045_basic'] },
          `user_authentication must include one of ${HIGH}`,
        ],
      }
      for (const [name, [options, description]] of Object.entries(cases)) {
        for (const proofType of ['jwt', 'attestation']) {
          const nonce = await cNonce()
          const attestationJwt = await keyAttestation([holder], { ...options, nonce })
          const proofs =
            proofType === 'jwt'
              ? { jwt: [await jwtProof(holder, nonce, attestationJwt)] }
              : { attestation: [attestationJwt] }
          const response = await credential(token, proofs)
          expect(response.statusCode, `${name} (${proofType})`).toBe(400)
          expect(response.json(), `${name} (${proofType})`).toStrictEqual({
            error: 'invalid_proof',
            error_description: description,
          })
        }
      }
      // The configuration's batch_size is 3.
      const four = [await keyPair(), await keyPair(), await keyPair(), await keyPair()]
      for (const proofType of ['jwt', 'attestation']) {
        const nonce = await cNonce()
        const attestationJwt = await keyAttestation(four, { nonce })
        const proofs =
          proofType === 'jwt'
            ? { jwt: [await jwtProof(four[0] as KeyPair, nonce, attestationJwt)] }
            : { attestation: [attestationJwt] }
        const response = await credential(token, proofs)
        expect(response.statusCode, proofType).toBe(400)
        expect(response.json().error, proofType).toBe('invalid_credential_request')
      }
    })

    it('I-65, S-65 / spec §1.2 tenant isolation: tenant B does not trust the key attestation anchor of tenant A', async () => {
      const token = await accessToken('attested', tenantB)
      const holder = await keyPair()
      const issuerB = `${baseUrl}/issuers/${tenantB}`
      const nonce = await cNonce(tenantB)
      const fromA = await keyAttestation([holder], { nonce })
      for (const proofs of [
        { attestation: [fromA] },
        { jwt: [await jwtProof(holder, await cNonce(tenantB), await keyAttestation([holder]), issuerB)] },
      ]) {
        const response = await credential(token, proofs, 'attested', tenantB)
        expect(response.statusCode, Object.keys(proofs)[0]).toBe(400)
        expect(response.json(), Object.keys(proofs)[0]).toStrictEqual({
          error: 'invalid_proof',
          error_description:
            'the key attestation is refused: x5c does not chain to a trusted wallet provider',
        })
      }
      // The same attestation is good at tenant A.
      const atA = await credential(await accessToken('attested'), {
        attestation: [await keyAttestation([holder], { nonce: await cNonce() })],
      })
      expect(atA.statusCode, atA.body).toBe(200)
    })

    it('trust lists: tenant B trusts A’s wallet provider through a PEM trust list its provider names, and no longer once the provider drops it', async () => {
      const api = (method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
        app.inject({ method, url, headers: adminB, ...(payload ? { payload } : {}) })
      const list = await api('POST', '/api/trust-lists', {
        id: 'wallets',
        source: { type: 'pem', certificates: [trusted.rootPem] },
      })
      expect(list.statusCode, list.body).toBe(201)
      const provider = await api('POST', '/api/wallet-providers', {
        id: 'listed',
        name: 'Listed',
        trustListIds: ['wallets'],
      })
      expect(provider.statusCode, provider.body).toBe(201)
      const holder = await keyPair()
      const attested = async () =>
        credential(
          await accessToken('attested', tenantB),
          { attestation: [await keyAttestation([holder], { nonce: await cNonce(tenantB) })] },
          'attested',
          tenantB,
        )
      const accepted = await attested()
      expect(accepted.statusCode, accepted.body).toBe(200)
      expect((await api('DELETE', '/api/trust-lists/wallets')).statusCode, 'named by the provider').toBe(409)

      const dropped = await api('PUT', '/api/wallet-providers/listed', {
        id: 'listed',
        name: 'Listed',
        trustAnchors: [(await attester('Someone else')).rootPem],
      })
      expect(dropped.statusCode, dropped.body).toBe(200)
      const refused = await attested()
      expect(refused.statusCode).toBe(400)
      expect(refused.json()).toStrictEqual({
        error: 'invalid_proof',
        error_description: 'the key attestation is refused: x5c does not chain to a trusted wallet provider',
      })
      expect((await api('DELETE', '/api/wallet-providers/listed')).statusCode).toBe(204)
      expect((await api('DELETE', '/api/trust-lists/wallets')).statusCode).toBe(204)
    })

    it('issue 25: a wallet provider given only trustAnchors gets the pem list anchors-<hash>; its attestations are accepted; the list is an ordinary one', async () => {
      const api = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
        app.inject({ method, url, headers: adminB, ...(payload ? { payload } : {}) })
      const listId = anchorsTrustListId([trusted.rootPem])
      const provider = await api('POST', '/api/wallet-providers', {
        id: 'shorthand',
        name: 'Shorthand',
        trustAnchors: [trusted.rootPem],
      })
      expect(provider.statusCode, provider.body).toBe(201)
      expect(provider.json()).toMatchObject({ trustListIds: [listId] })
      expect(provider.json().trustAnchors).toBeUndefined()
      expect((await api('GET', `/api/trust-lists/${listId}`)).json()).toMatchObject({
        source: { type: 'pem', certificates: [trusted.rootPem.trim()] },
        status: { state: 'current', certificateCount: 1 },
      })
      const holder = await keyPair()
      const accepted = await credential(
        await accessToken('attested', tenantB),
        { attestation: [await keyAttestation([holder], { nonce: await cNonce(tenantB) })] },
        'attested',
        tenantB,
      )
      expect(accepted.statusCode, accepted.body).toBe(200)
      expect((await api('DELETE', `/api/trust-lists/${listId}`)).statusCode, 'named by the provider').toBe(
        409,
      )
      expect((await api('DELETE', '/api/wallet-providers/shorthand')).statusCode).toBe(204)
      expect((await api('DELETE', `/api/trust-lists/${listId}`)).statusCode).toBe(204)
    })
  },
)
