import { generateKeyPairSync } from 'node:crypto'
import { setGlobalConfig } from '@openid4vc/oauth2'
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import type { FastifyInstance } from 'fastify'
import {
  compactVerify,
  decodeJwt,
  decodeProtectedHeader,
  importJWK,
  type JWK,
  jwtVerify,
  SignJWT,
} from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiClient, listenAllInOneWorld } from './harness'
import { resolveAndAnswer, type VerifyRequestJwt } from './oid4vp-wallet'
import { issueOverHttp, kbSigner, mdocDeviceResponse } from './wallet'

setGlobalConfig({ allowInsecureUrls: true })
const VCT = 'urn:eudi:pid:1'
const PID_QUERY = {
  credentials: [
    { id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: [VCT] }, claims: [{ path: ['given_name'] }] },
  ],
}
const HOUR = 3600
const MDL_QUERY = {
  credentials: [
    {
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: 'org.iso.18013.5.1.mDL' },
      claims: [{ path: ['org.iso.18013.5.1', 'family_name'] }],
    },
  ],
}

/** A P-256 key pair as JWKs: the request signing key of a key chain, or an attestation issuer's. */
function keyPair() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  return {
    privateJwk: privateKey.export({ format: 'jwk' }) as JWK,
    publicJwk: publicKey.export({ format: 'jwk' }) as JWK,
  }
}

describe('OpenID4VP 1.0 §5.9.3 client identifier prefixes redirect_uri and verifier_attestation, with an independent wallet (@openid4vc/openid4vp)', () => {
  let app: FastifyInstance
  let baseUrl: string
  let auth: Record<string, string>
  let verifierId: string
  const requestKey = keyPair()
  const attester = keyPair()
  const send = apiClient(
    () => baseUrl,
    () => auth,
  )
  const session = async (id: string) => (await send('GET', `/api/sessions/${id}`)).body

  /** A Verifier Attestation JWT (OpenID4VP 1.0 §12) signed by the test's attestation issuer. */
  const attestation = async (
    overrides: { typ?: string; sub?: string; exp?: number; cnf?: JWK } = {},
  ): Promise<string> =>
    new SignJWT({ cnf: { jwk: overrides.cnf ?? requestKey.publicJwk } })
      .setProtectedHeader({ alg: 'ES256', typ: overrides.typ ?? 'verifier-attestation+jwt' })
      .setIssuer('https://attestations.test.example')
      .setSubject(overrides.sub ?? verifierId)
      .setIssuedAt()
      .setExpirationTime(overrides.exp ?? Math.floor(Date.now() / 1000) + HOUR)
      .sign(await importJWK(attester.privateJwk, 'ES256'))

  beforeAll(async () => {
    // The `verifier-interop` world (test/worlds/verifier-interop): tenant a issues `pid` and `mdl`.
    const started = await listenAllInOneWorld('verifier-interop', { OUTBOUND_ALLOW_HTTP: 'true' })
    app = started.app
    baseUrl = started.baseUrl
    auth = started.tenants.a.auth
    verifierId = started.tenants.a.verifier
    // A key chain whose key the test knows: the attestation's cnf names its public half.
    const imported = await send('POST', '/api/key-chains', {
      source: 'import',
      id: 'attested',
      privateKey: requestKey.privateJwk,
    })
    expect(imported.status, JSON.stringify(imported.body)).toBe(201)
  })
  afterAll(async () => {
    await app.close()
  })

  /** An mDL with a family name for a fresh holder key, over HTTP (OpenID4VCI pre-authorized). */
  const issueMdl = () =>
    issueOverHttp({
      apiBase: baseUrl,
      auth,
      configurationId: 'mdl',
      claims: { 'org.iso.18013.5.1': { family_name: 'Mustermann' } },
    })

  /** The holder's SD-JWT VC presentation with a KB-JWT for `aud` (OpenID4VP B.3.6). */
  const presentPid = async (nonce: string, aud: string) => {
    const { credential, holder } = await issueOverHttp({
      apiBase: baseUrl,
      auth,
      configurationId: 'pid',
      claims: { given_name: 'Erika' },
    })
    const presenter = new SDJwtVcInstance({
      hasher: digest,
      saltGenerator: generateSalt,
      kbSignAlg: 'ES256',
      kbSigner: kbSigner(holder.privateKey),
    })
    return presenter.present(
      credential,
      { given_name: true },
      { kb: { payload: { iat: Math.floor(Date.now() / 1000), nonce, aud } } },
    )
  }

  describe('redirect_uri (checklist V-07)', () => {
    for (const responseMode of ['direct_post', 'direct_post.jwt'] as const) {
      it(`OpenID4VP 1.0 §5.9.3, V-07 (${responseMode}): an unsigned request by value, client_id redirect_uri:<response_uri>; the SD-JWT VC presentation verifies`, async () => {
        const id = `unsigned-${responseMode.replace('.', '-')}`
        const saved = await send('POST', '/api/presentations', {
          id,
          dcqlQuery: PID_QUERY,
          responseMode,
          keyChainId: 'keys',
          clientIdPrefix: 'redirect_uri',
        })
        expect(saved.status, JSON.stringify(saved.body)).toBe(201)
        const created = (await send('POST', '/api/presentation-requests', { presentationConfigId: id })).body
        expect(created).toMatchObject({ requestUri: null, requestUriMethod: null })
        const query = new URL(created.authorizationRequestUri).searchParams
        expect(query.has('request_uri')).toBe(false)
        expect(query.has('request')).toBe(false)
        expect(created.clientId).toBe(`redirect_uri:${query.get('response_uri')}`)

        const answer = await resolveAndAnswer(created.authorizationRequestUri, async (request) => ({
          pid: [await presentPid(request.nonce as string, request.client_id as string)],
        }))
        // The wallet's own rules: not signed (no JAR), the identifier equals the response URI.
        expect(answer.resolved.jar).toBeUndefined()
        expect(answer.resolved.client).toMatchObject({
          prefix: 'redirect_uri',
          effective: created.clientId,
          redirectUri: query.get('response_uri'),
        })
        expect(answer.request.client_metadata).toMatchObject({ jwks: { keys: [{ alg: 'ECDH-ES' }] } })
        expect(answer.status, answer.body).toBe(200)
        expect(await session(created.sessionId)).toMatchObject({
          status: 'verified',
          claims: { pid: [{ given_name: 'Erika', vct: VCT }] },
        })
      })
    }

    it('OpenID4VP 1.0 §5.9.3, V-07: there is no request object to fetch: the request_uri path of such a request answers 404', async () => {
      const created = (
        await send('POST', '/api/presentation-requests', { presentationConfigId: 'unsigned-direct_post' })
      ).body
      const responseUri = new URL(created.authorizationRequestUri).searchParams.get('response_uri') as string
      const response = await fetch(responseUri.replace('/responses/', '/requests/'))
      expect(response.status).toBe(404)
      expect(await response.json()).toMatchObject({ error: 'invalid_request' })
    })

    it('OpenID4VP 1.0 B.3.6, §14.10, S-71, V-34: a KB-JWT whose aud names another client_id is refused', async () => {
      const created = (
        await send('POST', '/api/presentation-requests', { presentationConfigId: 'unsigned-direct_post' })
      ).body
      const answer = await resolveAndAnswer(created.authorizationRequestUri, async (request) => ({
        // Another request's identifier: the response URI of a different request id.
        pid: [await presentPid(request.nonce as string, `${request.client_id as string}x`)],
      }))
      expect(answer.status).toBe(400)
      expect(JSON.parse(answer.body)).toMatchObject({ error: 'invalid_request' })
      expect(await session(created.sessionId)).toMatchObject({ status: 'failed' })
    })

    it('OpenID4VP 1.0 B.2.6.1, V-30: an mso_mdoc DeviceResponse whose handover names the redirect_uri client_id verifies; one naming another client_id does not (S-80)', async () => {
      const saved = await send('POST', '/api/presentations', {
        id: 'unsigned-mdl',
        dcqlQuery: MDL_QUERY,
        responseMode: 'direct_post',
        keyChainId: 'keys',
        clientIdPrefix: 'redirect_uri',
      })
      expect(saved.status, JSON.stringify(saved.body)).toBe(201)
      for (const [clientIdOf, expected] of [
        [(id: string) => id, 'verified'],
        [(id: string) => `${id}x`, 'failed'],
      ] as const) {
        const issued = await issueMdl()
        const created = (
          await send('POST', '/api/presentation-requests', { presentationConfigId: 'unsigned-mdl' })
        ).body
        const answer = await resolveAndAnswer(created.authorizationRequestUri, async (request) => ({
          mdl: [
            await mdocDeviceResponse({
              credential: issued.credential,
              holder: issued.holder,
              docType: 'org.iso.18013.5.1.mDL',
              clientId: clientIdOf(request.client_id as string),
              nonce: request.nonce as string,
              responseUri: request.response_uri as string,
            }),
          ],
        }))
        expect(answer.status, answer.body).toBe(expected === 'verified' ? 200 : 400)
        expect(await session(created.sessionId)).toMatchObject({ status: expected })
      }
    })

    it('OpenID4VP 1.0 §5.9.3: redirect_uri requests cannot be signed: a verifierAttestation with it is 422 naming the field', async () => {
      const saved = await send('POST', '/api/presentations', {
        id: 'unsigned-attested',
        dcqlQuery: PID_QUERY,
        keyChainId: 'attested',
        clientIdPrefix: 'redirect_uri',
        verifierAttestation: await attestation(),
      })
      expect(saved.status).toBe(422)
      expect(saved.body.errors).toStrictEqual([
        { path: 'body.verifierAttestation', message: expect.any(String) },
      ])
    })
  })

  describe('verifier_attestation (checklist V-08)', () => {
    /**
     * The wallet's check (§5.9.3): the attestation is signed by an issuer it trusts, typed, not
     * expired, issued to the client identifier; the request is signed by the attestation's cnf key.
     */
    const attestationVerifier =
      (checks: string[]): VerifyRequestJwt =>
      async (_signer, { compact, header, payload }) => {
        const attestationJwt = (header as { jwt?: string }).jwt as string
        const { payload: claims, protectedHeader } = await jwtVerify(
          attestationJwt,
          await importJWK(attester.publicJwk, 'ES256'),
          { typ: 'verifier-attestation+jwt', issuer: 'https://attestations.test.example' },
        )
        const clientId = (payload as { client_id: string }).client_id
        expect(clientId).toBe(`verifier_attestation:${claims.sub}`)
        expect(protectedHeader.typ).toBe('verifier-attestation+jwt')
        const cnf = (claims.cnf as { jwk: JWK }).jwk
        await compactVerify(compact, await importJWK(cnf, 'ES256'))
        checks.push('attestation', 'signature')
        return { verified: true, signerJwk: cnf as never }
      }

    it('OpenID4VP 1.0 §5.9.3, §12, V-08: the request object carries the attestation in the JOSE header jwt, is signed by its cnf key, and the SD-JWT VC presentation verifies', async () => {
      const jwt = await attestation()
      const saved = await send('POST', '/api/presentations', {
        id: 'attested',
        dcqlQuery: PID_QUERY,
        responseMode: 'direct_post.jwt',
        keyChainId: 'attested',
        clientIdPrefix: 'verifier_attestation',
        verifierAttestation: jwt,
      })
      expect(saved.status, JSON.stringify(saved.body)).toBe(201)
      expect(saved.body.verifierAttestation).toBe(jwt)
      const created = (await send('POST', '/api/presentation-requests', { presentationConfigId: 'attested' }))
        .body
      expect(created.clientId).toBe(`verifier_attestation:${verifierId}`)

      const checks: string[] = []
      const verifyWithAttestation = attestationVerifier(checks)
      const answer = await resolveAndAnswer(
        created.authorizationRequestUri,
        async (request) => ({
          pid: [await presentPid(request.nonce as string, request.client_id as string)],
        }),
        verifyWithAttestation,
      )
      expect(checks).toStrictEqual(['attestation', 'signature'])
      expect(answer.resolved.client).toMatchObject({
        prefix: 'verifier_attestation',
        effective: created.clientId,
      })
      expect(answer.status, answer.body).toBe(200)
      expect(await session(created.sessionId)).toMatchObject({
        status: 'verified',
        claims: { pid: [{ given_name: 'Erika', vct: VCT }] },
      })

      // The request object as fetched: header jwt = the attestation, no x5c, signed by requestKey.
      const fetched = (await send('POST', '/api/presentation-requests', { presentationConfigId: 'attested' }))
        .body
      const requestObject = await (await fetch(fetched.requestUri)).text()
      expect(decodeProtectedHeader(requestObject)).toStrictEqual({
        typ: 'oauth-authz-req+jwt',
        alg: 'ES256',
        kid: expect.any(String),
        jwt,
      })
      await compactVerify(requestObject, await importJWK(requestKey.publicJwk, 'ES256'))
      expect(decodeJwt(requestObject).client_id).toBe(`verifier_attestation:${verifierId}`)
    })

    it('OpenID4VP 1.0 §5.9.3, §12, B.2.6.1, V-08, V-30: an mso_mdoc DeviceResponse whose handover names the verifier_attestation client_id verifies', async () => {
      const saved = await send('POST', '/api/presentations', {
        id: 'attested-mdl',
        dcqlQuery: MDL_QUERY,
        responseMode: 'direct_post.jwt',
        keyChainId: 'attested',
        clientIdPrefix: 'verifier_attestation',
        verifierAttestation: await attestation(),
      })
      expect(saved.status, JSON.stringify(saved.body)).toBe(201)
      const issued = await issueMdl()
      const created = (
        await send('POST', '/api/presentation-requests', { presentationConfigId: 'attested-mdl' })
      ).body
      const checks: string[] = []
      const answer = await resolveAndAnswer(
        created.authorizationRequestUri,
        async (request) => ({
          mdl: [
            await mdocDeviceResponse({
              credential: issued.credential,
              holder: issued.holder,
              docType: 'org.iso.18013.5.1.mDL',
              clientId: request.client_id as string,
              nonce: request.nonce as string,
              responseUri: request.response_uri as string,
              encryptionJwk: (request.client_metadata as { jwks: { keys: JWK[] } }).jwks.keys[0],
            }),
          ],
        }),
        attestationVerifier(checks),
      )
      expect(checks).toStrictEqual(['attestation', 'signature'])
      expect(answer.status, answer.body).toBe(200)
      expect(await session(created.sessionId)).toMatchObject({
        status: 'verified',
        claims: { mdl: [{ 'org.iso.18013.5.1': { family_name: 'Mustermann' } }] },
      })
    })

    const refusals: [string, () => Promise<Record<string, unknown>>][] = [
      [
        'whose cnf is not the key chain key',
        async () => ({ verifierAttestation: await attestation({ cnf: keyPair().publicJwk }) }),
      ],
      [
        'that has expired',
        async () => ({ verifierAttestation: await attestation({ exp: Math.floor(Date.now() / 1000) - 60 }) }),
      ],
      [
        'issued to another sub',
        async () => ({ verifierAttestation: await attestation({ sub: `${verifierId}-other` }) }),
      ],
      [
        'typed other than verifier-attestation+jwt',
        async () => ({ verifierAttestation: await attestation({ typ: 'JWT' }) }),
      ],
      ['missing', async () => ({})],
    ]
    for (const [index, [what, body]] of refusals.entries()) {
      it(`OpenID4VP 1.0 §12, V-08: a verifier attestation ${what} is refused at save, 422 naming verifierAttestation`, async () => {
        const saved = await send('POST', '/api/presentations', {
          // One id each: a case the service wrongly accepts cannot turn the next into a 409.
          id: `refused-attestation-${index}`,
          dcqlQuery: PID_QUERY,
          keyChainId: 'attested',
          clientIdPrefix: 'verifier_attestation',
          ...(await body()),
        })
        expect(saved.status, JSON.stringify(saved.body)).toBe(422)
        expect(saved.body.errors).toStrictEqual([
          { path: 'body.verifierAttestation', message: expect.any(String) },
        ])
      })
    }
  })

  describe("decentralized_identifier: the verifier's did:web (checklist V-07)", () => {
    /**
     * The wallet's DID resolution (did:web method §3.2, over PUBLIC_URL's scheme here: http in
     * tests): the DID document at the path the DID names, the verification method the `kid` names.
     */
    const verifyWithDidWeb: VerifyRequestJwt = async (signer, { compact }) => {
      if (signer.method !== 'did') return { verified: false }
      const [did] = signer.didUrl.split('#') as [string]
      const [, , host, ...path] = did.split(':')
      const url = `${new URL(baseUrl).protocol}//${decodeURIComponent(host as string)}/${path.map(decodeURIComponent).join('/')}/did.json`
      const document = (await (await fetch(url)).json()) as {
        id: string
        verificationMethod: { id: string; publicKeyJwk: JWK }[]
      }
      expect(document.id).toBe(did)
      const method = document.verificationMethod.find((candidate) => candidate.id === signer.didUrl)
      if (!method) return { verified: false }
      await compactVerify(compact, await importJWK(method.publicKeyJwk, signer.alg))
      return { verified: true, signerJwk: method.publicKeyJwk as never }
    }

    it("OpenID4VP 1.0 §5.9.3: the request object is signed by a key of the verifier's DID document (kid a DID URL, no x5c); the wallet resolves it and the SD-JWT VC presentation verifies", async () => {
      const saved = await send('POST', '/api/presentations', {
        id: 'did',
        dcqlQuery: PID_QUERY,
        keyChainId: 'keys',
        clientIdPrefix: 'decentralized_identifier',
      })
      expect(saved.status, JSON.stringify(saved.body)).toBe(201)
      const created = (await send('POST', '/api/presentation-requests', { presentationConfigId: 'did' })).body
      const port = new URL(baseUrl).port
      expect(created.clientId).toBe(
        `decentralized_identifier:did:web:localhost%3A${port}:verifiers:${verifierId.split('/').at(-1)}`,
      )
      const answer = await resolveAndAnswer(
        created.authorizationRequestUri,
        async (request) => ({
          pid: [await presentPid(request.nonce as string, request.client_id as string)],
        }),
        verifyWithDidWeb,
      )
      expect(answer.resolved.client).toMatchObject({
        prefix: 'decentralized_identifier',
        effective: created.clientId,
      })
      expect(answer.status, answer.body).toBe(200)
      expect(await session(created.sessionId)).toMatchObject({ status: 'verified' })

      const fetched = (await send('POST', '/api/presentation-requests', { presentationConfigId: 'did' })).body
      const header = decodeProtectedHeader(await (await fetch(fetched.requestUri)).text())
      expect(header.kid).toMatch(
        new RegExp(`^${created.clientId.slice('decentralized_identifier:'.length)}#`),
      )
      expect(header).not.toHaveProperty('x5c')
    })

    it('the DID document is served for existing tenants only (404 otherwise), as application/did+json', async () => {
      const found = await fetch(`${verifierId}/did.json`)
      expect(found.status).toBe(200)
      expect(found.headers.get('content-type')).toMatch(/^application\/did\+json/)
      const document = (await found.json()) as { verificationMethod: { publicKeyJwk: JWK }[] }
      expect(document.verificationMethod.length).toBeGreaterThan(0)
      for (const method of document.verificationMethod) expect(method.publicKeyJwk).not.toHaveProperty('d')
      expect((await fetch(`${baseUrl}/verifiers/no-such-tenant/did.json`)).status).toBe(404)
    })
  })
})
