import { createPrivateKey } from 'node:crypto'
import { issueTestCertificate, type TestCertificate } from '@credential-service/crypto/testing'
import { startWorld, type World } from '@credential-service/management/testing'
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildVerifierApp } from '../src/app'

// biome-ignore lint/suspicious/noExplicitAny: request object claims are read loosely in tests
type Loose = Record<string, any>

const ISSUER = 'https://pid-issuer.example.com'
const VCT = 'urn:eudi:pid:1'
const JAR = 'application/oauth-authz-req+jwt'

// routes/requests.ts over the `verification` world (test/worlds/verification): the verifier
// served alone, the management API beside it creating the requests, and a PID issuer of the test
// (someone else's SD-JWT VC library) whose root the world's presentation configuration trusts.
describe('verifier request objects and responses (OpenID4VP 1.0 §5.10, §8.2)', () => {
  let world: World
  let root: TestCertificate
  let leaf: TestCertificate

  beforeAll(async () => {
    root = await issueTestCertificate({ subject: 'CN=World PID Root,C=DE', ca: true })
    leaf = await issueTestCertificate({ subject: 'CN=World PID Issuer,C=DE', issuer: root, uris: [ISSUER] })
    world = await startWorld('verification', {
      env: { ISSUER_ANCHOR: root.pem },
      apps: ({ config, database, now }) => [buildVerifierApp({ config, database, ...(now ? { now } : {}) })],
    })
  })
  afterAll(() => world.close())

  /** A presentation request of `ask` made by tenant `tenant` through the management API. */
  async function request(tenant: 'a' | 'b' = 'a') {
    const response = await world.management.inject({
      method: 'POST',
      url: '/api/presentation-requests',
      headers: world.tenants[tenant].auth,
      payload: { presentationConfigId: 'ask' },
    })
    expect(response.statusCode, response.body).toBe(201)
    const created = response.json()
    const path = new URL(created.requestUri).pathname
    return { sessionId: created.sessionId as string, path, id: path.split('/').at(-1) as string }
  }

  const fetchRequest = async (path: string) => {
    const response = await world.app.inject({ url: path })
    expect(response.statusCode, response.body).toBe(200)
    return decodeJwt(response.body) as Loose
  }

  /** An SD-JWT VC of the test's issuer for a fresh holder key, presented with a KB-JWT for `object`. */
  async function presentation(object: Loose) {
    const holder = await generateKeyPair('ES256')
    const issuerKey = createPrivateKey({ key: leaf.keys.privateJwk as never, format: 'jwk' })
    const sign = async (privateKey: Parameters<SignJWT['sign']>[0], data: string) => {
      const [header, payload] = data.split('.') as [string, string]
      const jwt = await new SignJWT(JSON.parse(Buffer.from(payload, 'base64url').toString()))
        .setProtectedHeader(JSON.parse(Buffer.from(header, 'base64url').toString()))
        .sign(privateKey)
      return jwt.split('.')[2] as string
    }
    const sdJwt = new SDJwtVcInstance({
      hasher: digest,
      saltGenerator: generateSalt,
      signer: (data) => sign(issuerKey, data),
      signAlg: 'ES256',
      kbSigner: (data) => sign(holder.privateKey, data),
      kbSignAlg: 'ES256',
    })
    const now = Math.floor(Date.now() / 1000)
    const credential = await sdJwt.issue(
      {
        iss: ISSUER,
        vct: VCT,
        iat: now,
        exp: now + 3600,
        cnf: { jwk: await exportJWK(holder.publicKey) },
        given_name: 'Erika',
        age_over_18: true,
      },
      { _sd: ['given_name', 'age_over_18'] },
      { header: { x5c: [leaf.der] } },
    )
    return sdJwt.present(
      credential,
      { age_over_18: true },
      { kb: { payload: { iat: now, nonce: object.nonce, aud: object.client_id } } },
    )
  }

  const respond = (path: string, form: Record<string, string>, tenant = world.tenants.a.id) =>
    world.app.inject({
      method: 'POST',
      url: path.replace('/requests/', '/responses/').replace(/\/verifiers\/[^/]+\//, `/verifiers/${tenant}/`),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(form).toString(),
    })

  const sessionStatus = async (sessionId: string) =>
    (
      await world.management.inject({ url: `/api/sessions/${sessionId}`, headers: world.tenants.a.auth })
    ).json().status

  describe('happy', () => {
    it('§5.10: GET answers the signed request object of the tenant (JAR), not cached', async () => {
      const { path, id } = await request()
      const response = await world.app.inject({ url: path })
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toBe(JAR)
      expect(response.headers['cache-control']).toBe('no-store')
      expect(decodeProtectedHeader(response.body)).toMatchObject({
        typ: 'oauth-authz-req+jwt',
        x5c: expect.any(Array),
      })
      const object = decodeJwt(response.body) as Loose
      expect(object).toMatchObject({
        response_type: 'vp_token',
        response_mode: 'direct_post',
        response_uri: `${world.tenants.a.verifier}/responses/${id}`,
        client_id: expect.stringMatching(/^x509_san_dns:/),
        nonce: expect.any(String),
        state: expect.any(String),
      })
      expect(object.dcql_query.credentials[0]).toMatchObject({ id: 'pid', meta: { vct_values: [VCT] } })
    })

    it('§5.10.1: POST answers the request object too, with the wallet_nonce the wallet sent', async () => {
      const { path } = await request()
      const response = await world.app.inject({
        method: 'POST',
        url: path,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'wallet_nonce=nonce-of-the-wallet',
      })
      expect(response.statusCode, response.body).toBe(200)
      expect(response.headers['content-type']).toBe(JAR)
      expect(decodeJwt(response.body)).toMatchObject({ wallet_nonce: 'nonce-of-the-wallet' })
    })

    it('§8.2: a presentation that answers the query ends the session verified', async () => {
      const { path, sessionId } = await request()
      const object = await fetchRequest(path)
      const vp = await presentation(object)
      const response = await respond(path, { vp_token: JSON.stringify({ pid: [vp] }), state: object.state })
      expect(response.statusCode, response.body).toBe(200)
      expect(response.headers['cache-control']).toBe('no-store')
      expect(await sessionStatus(sessionId)).toBe('verified')
    })
  })

  describe('error', () => {
    it('an unknown request id is 404 at the request endpoint, invalid_request at the response endpoint', async () => {
      const unknown = `/verifiers/${world.tenants.a.id}/requests/req_unknown`
      const fetched = await world.app.inject({ url: unknown })
      expect(fetched.statusCode).toBe(404)
      expect(fetched.json()).toMatchObject({ error: 'invalid_request' })
      // No open request: the same answer as for an expired or answered one.
      const response = await respond(unknown, { vp_token: '{}', state: 'x' })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ error: 'invalid_request' })
    })

    it('V-20 §8.2: a response that is not a form post is invalid_request', async () => {
      const { path } = await request()
      const object = await fetchRequest(path)
      const response = await world.app.inject({
        method: 'POST',
        url: path.replace('/requests/', '/responses/'),
        payload: { vp_token: {}, state: object.state },
      })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ error: 'invalid_request' })
    })

    it('§8.2: a response whose state is not the request state is refused and verifies nothing', async () => {
      const { path, sessionId } = await request()
      const object = await fetchRequest(path)
      const vp = await presentation(object)
      const response = await respond(path, {
        vp_token: JSON.stringify({ pid: [vp] }),
        state: 'another-state',
      })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ error: 'invalid_request' })
      expect(await sessionStatus(sessionId)).not.toBe('verified')
    })

    it('§8.2: a response without a vp_token is refused', async () => {
      const { path } = await request()
      const object = await fetchRequest(path)
      const response = await respond(path, { state: object.state })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ error: 'invalid_request' })
    })
  })

  describe('security', () => {
    it('tenant B can neither fetch nor answer tenant A request; A request still works after', async () => {
      const { path, sessionId } = await request('a')
      const asB = path.replace(`/verifiers/${world.tenants.a.id}/`, `/verifiers/${world.tenants.b.id}/`)
      expect((await world.app.inject({ url: asB })).statusCode).toBe(404)
      const object = await fetchRequest(path)
      const vp = await presentation(object)
      const form = { vp_token: JSON.stringify({ pid: [vp] }), state: object.state }
      const answeredAtB = await respond(path, form, world.tenants.b.id)
      expect(answeredAtB.statusCode).toBe(400)
      expect(answeredAtB.json()).toMatchObject({ error: 'invalid_request' })
      expect(await sessionStatus(sessionId)).not.toBe('verified')
      expect((await respond(path, form)).statusCode).toBe(200)
      expect(await sessionStatus(sessionId)).toBe('verified')
    })

    it('a response replayed after the session ended is refused', async () => {
      const { path } = await request()
      const object = await fetchRequest(path)
      const form = { vp_token: JSON.stringify({ pid: [await presentation(object)] }), state: object.state }
      expect((await respond(path, form)).statusCode).toBe(200)
      const replay = await respond(path, form)
      expect(replay.statusCode).toBe(400)
      expect(replay.json()).toMatchObject({ error: 'invalid_request' })
    })
  })
})
