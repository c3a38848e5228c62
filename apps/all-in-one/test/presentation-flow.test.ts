import { createHash, createHmac, createPrivateKey, X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer as createHttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { deflateSync } from 'node:zlib'
import {
  createCertificate,
  generateKeyPair as generateIssuerKeyPair,
  issueSdJwtVc,
  MAX_STATUS_LIST_BYTES,
  type Signer,
  signJws,
  signWithKeyObject,
} from '@credential-service/crypto'
import { anchorsTrustListId, tenantChanged } from '@credential-service/db-schema'
import { type DatabaseHandle, migrationsFolder } from '@credential-service/db-schema/client'
import { testDatabases } from '@credential-service/db-schema/testing'
import { DEFAULT_HTTP_LIMITS } from '@credential-service/server-kit'
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { StatusList } from '@sd-jwt/jwt-status-list'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import { sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import {
  base64url,
  CompactEncrypt,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  SignJWT,
} from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAllInOneWorld, startReceiver, webhookEvent } from './harness'
import { kbSigner, mdocDeviceResponse } from './wallet'

// biome-ignore lint/suspicious/noExplicitAny: request object claims are read loosely in tests
type Loose = Record<string, any>

const PUBLIC_URL = 'https://credentials.example.com'
const VCT = 'urn:eudi:pid:1'
const DOCTYPE = 'org.iso.18013.5.1.mDL'
const NS = 'org.iso.18013.5.1'
const MIGRATION_0026 = '0026_pem_anchors_to_trust_lists'

describe.each(testDatabases())('OpenID4VP response and SD-JWT VC validation on $name', (testDatabase) => {
  let app: FastifyInstance
  /** Moves the clock of every app (expiry tests). */
  let clockOffset = 0
  let root: Record<string, string>
  const tenants: Record<string, Record<string, string>> = {}
  let rp: string
  let foreign: string
  let database: DatabaseHandle

  const post = (url: string, payload: unknown, headers: Record<string, string>) =>
    app.inject({ method: 'POST', url, headers, payload: payload as object })

  beforeAll(async () => {
    // The `presentation-flow` world (test/worlds/presentation-flow): each tenant issues `pid` and
    // `mdl` and asks for them in `plain`, `encrypted`, `mdl-plain` and `mdl-encrypted`.
    const started = await startAllInOneWorld(
      testDatabase,
      'presentation-flow',
      PUBLIC_URL,
      {
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
        WEBHOOK_BACKOFF_MS: '20',
      },
      () => new Date(Date.now() + clockOffset),
    )
    app = started.app
    database = started.database
    await app.ready()
    root = started.root
    rp = started.tenants.a.id
    foreign = started.tenants.b.id
    tenants[rp] = started.tenants.a.auth
    tenants[foreign] = started.tenants.b.auth
  })
  afterAll(() => app.close())

  /** A holder key and an SD-JWT VC for it, issued by `tenant` over OpenID4VCI. */
  async function issue(
    tenant: string,
    claims: Record<string, unknown> = { given_name: 'Erika', age_over_18: true },
    configurationId = 'pid',
  ) {
    const auth = tenants[tenant] as Record<string, string>
    const offer = (
      await post(
        '/api/offers',
        {
          credentialConfigurationIds: [configurationId],
          claims: { [configurationId]: claims },
          byReference: false,
        },
        auth,
      )
    ).json()
    const code =
      offer.credentialOffer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code'][
        'pre-authorized_code'
      ]
    const accessToken = (
      await app.inject({
        method: 'POST',
        url: `/issuers/${tenant}/token`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
          'pre-authorized_code': code,
        }).toString(),
      })
    ).json().access_token
    const nonce = (await app.inject({ method: 'POST', url: `/issuers/${tenant}/nonce` })).json().c_nonce
    const holder = await generateKeyPair('ES256')
    const jwk = await exportJWK(holder.publicKey)
    const proof = await new SignJWT({ nonce })
      .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk })
      .setAudience(`${PUBLIC_URL}/issuers/${tenant}`)
      .setIssuedAt()
      .sign(holder.privateKey)
    const response = await post(
      `/issuers/${tenant}/credential`,
      { credential_configuration_id: configurationId, proofs: { jwt: [proof] } },
      { authorization: `Bearer ${accessToken}` },
    )
    return { credential: response.json().credentials[0].credential as string, holder }
  }

  async function request(configId: string, extra: Record<string, unknown> = {}) {
    const created = (
      await post(
        '/api/presentation-requests',
        { presentationConfigId: configId, ...extra },
        tenants[rp] as Record<string, string>,
      )
    ).json()
    const jar = (await app.inject({ url: new URL(created.requestUri).pathname })).body
    return { created, claims: decodeJwt(jar) as Loose }
  }

  /** The wallet's SD-JWT+KB over the disclosures it chooses (@sd-jwt/sd-jwt-vc). */
  async function present(
    issued: Awaited<ReturnType<typeof issue>>,
    kb: { nonce: string; aud: string; iat?: number; transaction_data_hashes?: string[] } | undefined,
  ) {
    const holderSdJwt = new SDJwtVcInstance({
      hasher: digest,
      saltGenerator: generateSalt,
      kbSigner: kbSigner(issued.holder.privateKey),
      kbSignAlg: 'ES256',
    })
    return holderSdJwt.present(
      issued.credential,
      { age_over_18: true },
      kb ? { kb: { payload: { iat: Math.floor(Date.now() / 1000), ...kb } } } : undefined,
    )
  }

  const respond = (requestUri: string, form: Record<string, string>) =>
    app.inject({
      method: 'POST',
      url: new URL(requestUri).pathname.replace('/requests/', '/responses/'),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(form).toString(),
    })

  async function encrypt(claims: Loose, body: Record<string, unknown>) {
    const key = claims.client_metadata.jwks.keys[0] as JWK
    return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(body)))
      .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128GCM', kid: key.kid as string })
      .encrypt(await importJWK(key, 'ECDH-ES'))
  }

  const session = async (id: string) =>
    (await app.inject({ url: `/api/sessions/${id}`, headers: tenants[rp] as Record<string, string> })).json()

  it('OpenID4VP §8.2 direct_post: a valid SD-JWT+KB from our own issuer verifies; claims on the session; F-02: its x5c is a leaf the default key chain’s root issued', async () => {
    const issued = await issue(rp)
    const header = decodeProtectedHeader(issued.credential.split('~')[0] as string)
    expect(header.x5c).toHaveLength(1)
    const leaf = new X509Certificate(Buffer.from((header.x5c as string[])[0] as string, 'base64'))
    expect(leaf.issuer).not.toBe(leaf.subject)
    expect(leaf.issuer).toContain('CN=World RP A Root CA')
    expect(leaf.verify(leaf.publicKey)).toBe(false)
    const { created, claims } = await request('plain')
    const vp = await present(issued, { nonce: claims.nonce, aud: claims.client_id })
    const response = await respond(created.requestUri, {
      vp_token: JSON.stringify({ pid: [vp] }),
      state: claims.state,
    })
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toStrictEqual({})
    const result = await session(created.sessionId)
    expect(result).toMatchObject({ kind: 'presentation', status: 'verified', failureReason: null })
    expect(result.claims.pid[0]).toMatchObject({
      vct: VCT,
      iss: `${PUBLIC_URL}/issuers/${rp}`,
      age_over_18: true,
    })
    expect(result.claims.pid[0].given_name).toBeUndefined() // not disclosed

    // V-23: replaying the same response is refused.
    const replay = await respond(created.requestUri, {
      vp_token: JSON.stringify({ pid: [vp] }),
      state: claims.state,
    })
    expect(replay.statusCode).toBe(400)
  })

  it('OpenID4VP §8.3 direct_post.jwt (V-25): an ECDH-ES JWE to this request’s key verifies; same-device gets a response_code', async () => {
    const issued = await issue(rp)
    const { created, claims } = await request('encrypted', { redirectUri: 'https://rp.example.com/done' })
    const vp = await present(issued, { nonce: claims.nonce, aud: claims.client_id })
    const response = await respond(created.requestUri, {
      response: await encrypt(claims, { vp_token: { pid: [vp] }, state: claims.state }),
    })
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json().redirect_uri).toMatch(
      /^https:\/\/rp\.example\.com\/done#response_code=[A-Za-z0-9_-]{43}$/,
    )
    expect((await session(created.sessionId)).status).toBe('verified')
  })

  const attacks: [
    string,
    (ctx: {
      issued: Awaited<ReturnType<typeof issue>>
      claims: Loose
      created: Loose
    }) => Promise<Record<string, string>>,
    string,
  ][] = [
    [
      'KB-JWT nonce mismatch',
      async ({ issued, claims }) => ({
        vp_token: JSON.stringify({ pid: [await present(issued, { nonce: 'other', aud: claims.client_id })] }),
        state: claims.state,
      }),
      'did not verify',
    ],
    [
      'KB-JWT aud without the client id prefix (V-34)',
      async ({ issued, claims }) => ({
        vp_token: JSON.stringify({
          pid: [await present(issued, { nonce: claims.nonce, aud: 'credentials.example.com' })],
        }),
        state: claims.state,
      }),
      "aud is not 'x509_san_dns:",
    ],
    [
      'missing KB-JWT',
      async ({ issued, claims }) => ({
        vp_token: JSON.stringify({ pid: [await present(issued, undefined)] }),
        state: claims.state,
      }),
      'Key Binding JWT not exist',
    ],
    [
      'stale KB-JWT iat',
      async ({ issued, claims }) => ({
        vp_token: JSON.stringify({
          pid: [
            await present(issued, {
              nonce: claims.nonce,
              aud: claims.client_id,
              iat: Math.floor(Date.now() / 1000) - 3600,
            }),
          ],
        }),
        state: claims.state,
      }),
      'iat is not fresh',
    ],
    [
      'tampered disclosure',
      async ({ issued, claims }) => {
        const vp = await present(issued, { nonce: claims.nonce, aud: claims.client_id })
        const parts = vp.split('~')
        parts[1] = base64url.encode(JSON.stringify(['salt', 'age_over_18', false]))
        return { vp_token: JSON.stringify({ pid: [parts.join('~')] }), state: claims.state }
      },
      'did not verify',
    ],
    [
      'response for another request (state)',
      async ({ issued, claims }) => ({
        vp_token: JSON.stringify({
          pid: [await present(issued, { nonce: claims.nonce, aud: claims.client_id })],
        }),
        state: 'another-state',
      }),
      'state does not match',
    ],
    [
      'unknown credential id',
      async ({ issued, claims }) => ({
        vp_token: JSON.stringify({
          other: [await present(issued, { nonce: claims.nonce, aud: claims.client_id })],
        }),
        state: claims.state,
      }),
      'did not ask for',
    ],
    [
      'wallet error response (V-24)',
      async () => ({ error: 'access_denied', error_description: 'user declined' }),
      'wallet error: access_denied',
    ],
  ]

  for (const [name, build, reason] of attacks) {
    it(`attack: ${name} ends in a failed session with the reason`, async () => {
      const issued = await issue(rp)
      const { created, claims } = await request('plain')
      const response = await respond(created.requestUri, await build({ issued, claims, created }))
      if (!name.startsWith('wallet error')) expect(response.statusCode, response.body).toBe(400)
      const result = await session(created.sessionId)
      expect(result.status).toBe('failed')
      expect(result.failureReason).toContain(reason)
    })
  }

  it('attack: a credential from an issuer the tenant does not trust fails (V-32, fail closed)', async () => {
    const issued = await issue(foreign)
    const { created, claims } = await request('plain')
    const response = await respond(created.requestUri, {
      vp_token: JSON.stringify({
        pid: [await present(issued, { nonce: claims.nonce, aud: claims.client_id })],
      }),
      state: claims.state,
    })
    expect(response.statusCode).toBe(400)
    expect((await session(created.sessionId)).failureReason).toBe(
      'the issuer does not chain to a trust anchor of this tenant',
    )
  })

  it('attack: plaintext where a JWE is required, and a JWE to another request’s key', async () => {
    const issued = await issue(rp)
    const first = await request('encrypted')
    const plain = await respond(first.created.requestUri, {
      vp_token: JSON.stringify({
        pid: [await present(issued, { nonce: first.claims.nonce, aud: first.claims.client_id })],
      }),
      state: first.claims.state,
    })
    expect(plain.statusCode).toBe(400)
    expect((await session(first.created.sessionId)).failureReason).toContain('must be encrypted')

    const second = await request('encrypted')
    const other = await request('encrypted')
    const misdirected = await encrypt(other.claims, { vp_token: { pid: ['x'] }, state: second.claims.state })
    const response = await respond(second.created.requestUri, { response: misdirected })
    expect(response.statusCode).toBe(400)
    expect((await session(second.created.sessionId)).failureReason).toMatch(
      /another key|could not be decrypted/,
    )
  })

  it('transaction data (V-28): the KB-JWT must carry the hashes of the request’s transaction data', async () => {
    const issued = await issue(rp)
    const { created, claims } = await request('plain', {
      transactionData: [{ type: 'payment', credential_ids: ['pid'], amount: '42.00 EUR' }],
    })
    expect(claims.transaction_data).toHaveLength(1)
    const hashes = (claims.transaction_data as string[]).map((entry) =>
      createHash('sha256').update(entry).digest('base64url'),
    )
    const ok = await respond(created.requestUri, {
      vp_token: JSON.stringify({
        pid: [
          await present(issued, {
            nonce: claims.nonce,
            aud: claims.client_id,
            transaction_data_hashes: hashes,
          }),
        ],
      }),
      state: claims.state,
    })
    expect(ok.statusCode, ok.body).toBe(200)
    const again = await request('plain', {
      transactionData: [{ type: 'payment', credential_ids: ['pid'], amount: '42.00 EUR' }],
    })
    const missing = await respond(again.created.requestUri, {
      vp_token: JSON.stringify({
        pid: [await present(issued, { nonce: again.claims.nonce, aud: again.claims.client_id })],
      }),
      state: again.claims.state,
    })
    expect(missing.statusCode).toBe(400)
    expect((await session(again.created.sessionId)).failureReason).toContain('transaction_data_hashes')
  })

  it('the result goes to the webhook endpoint, signed; with drop-after-delivery the claims leave the session', async () => {
    const receiver = await startReceiver()
    const { received } = receiver
    try {
      const auth = tenants[rp] as Record<string, string>
      const hook = await post(
        '/api/webhook-endpoints',
        {
          id: 'results',
          url: `${receiver.url}/in`,
          auth: { type: 'hmac' },
          events: ['presentation.result'],
        },
        auth,
      )
      expect(hook.statusCode, hook.body).toBe(201)
      await app.inject({
        method: 'PATCH',
        url: `/api/tenants/${rp}`,
        headers: root,
        payload: { presentationRetention: 'drop-after-delivery' },
      })
      const issued = await issue(rp)
      const { created, claims } = await request('plain', { webhookEndpointId: 'results' })
      const vp = await present(issued, { nonce: claims.nonce, aud: claims.client_id })
      expect(
        (await respond(created.requestUri, { vp_token: JSON.stringify({ pid: [vp] }), state: claims.state }))
          .statusCode,
      ).toBe(200)
      let result: Loose = {}
      for (let i = 0; i < 50 && result.delivery?.status !== 'delivered'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        result = await session(created.sessionId)
      }
      expect(result).toMatchObject({
        status: 'verified',
        claims: null,
        delivery: { status: 'delivered', attempts: 1, error: null },
      })
      const event = webhookEvent(received[0])
      expect(event).toMatchObject({
        type: 'presentation.result',
        sessionId: created.sessionId,
        status: 'verified',
        claims: { pid: [{ age_over_18: true }] },
      })
      const signature = createHmac('sha256', hook.json().signingSecret)
        .update(`${received[0]?.headers['x-timestamp']}.${received[0]?.body}`)
        .digest('hex')
      expect(received[0]?.headers['x-signature']).toBe(`sha256=${signature}`)
    } finally {
      await app.inject({
        method: 'PATCH',
        url: `/api/tenants/${rp}`,
        headers: root,
        payload: { presentationRetention: 'keep' },
      })
      receiver.close()
    }
  })

  /** An mdoc issued by `tenant` over OpenID4VCI, and the holder's key pair. */
  async function issueMdl(tenant: string) {
    return issue(tenant, { [NS]: { family_name: 'Mustermann', age_over_18: true } }, 'mdl')
  }

  const deviceResponse = (
    issued: Awaited<ReturnType<typeof issueMdl>>,
    binding: { clientId: string; nonce: string; responseUri: string; encryptionJwk?: JWK },
  ) => mdocDeviceResponse({ ...issued, docType: DOCTYPE, ...binding })

  for (const configId of ['mdl-plain', 'mdl-encrypted']) {
    it(`OpenID4VP B.2 (${configId}): an mdoc DeviceResponse bound to the SessionTranscript verifies; another transcript fails`, async () => {
      const issued = await issueMdl(rp)
      const { created, claims } = await request(configId)
      const encryptionJwk =
        configId === 'mdl-encrypted' ? (claims.client_metadata.jwks.keys[0] as JWK) : undefined
      const send = async (target: { created: Loose; claims: Loose }, vp: string) =>
        encryptionJwk
          ? respond(target.created.requestUri, {
              response: await encrypt(target.claims, { vp_token: { mdl: [vp] }, state: target.claims.state }),
            })
          : respond(target.created.requestUri, {
              vp_token: JSON.stringify({ mdl: [vp] }),
              state: target.claims.state,
            })
      const binding = (target: Loose, nonce: string) => ({
        clientId: target.client_id,
        nonce,
        responseUri: target.response_uri,
        ...(encryptionJwk ? { encryptionJwk: target.client_metadata.jwks.keys[0] as JWK } : {}),
      })
      const response = await send(
        { created, claims },
        await deviceResponse(issued, binding(claims, claims.nonce)),
      )
      expect(response.statusCode, response.body).toBe(200)
      expect(await session(created.sessionId)).toMatchObject({
        status: 'verified',
        claims: { mdl: [{ [NS]: { family_name: 'Mustermann', age_over_18: true } }] },
      })

      // Wrong SessionTranscript: the device signed for another nonce.
      const again = await request(configId)
      const refused = await send(again, await deviceResponse(issued, binding(again.claims, 'another-nonce')))
      expect(refused.statusCode).toBe(400)
      expect((await session(again.created.sessionId)).failureReason).toContain('the mdoc did not verify')
    })
  }

  it('attack: an expired credential fails (SD-JWT VC exp)', async () => {
    const auth = tenants[rp] as Record<string, string>
    const pid = (await app.inject({ url: '/api/credentials/pid', headers: auth })).json()
    const { createdAt: _c, updatedAt: _u, ...config } = pid
    await app.inject({
      method: 'PUT',
      url: '/api/credentials/pid',
      headers: auth,
      payload: { ...config, lifetimeSeconds: 60 },
    })
    try {
      const issued = await issue(rp)
      clockOffset = 120_000 // two minutes later: the credential has expired
      const { created, claims } = await request('plain')
      const vp = await present(issued, {
        nonce: claims.nonce,
        aud: claims.client_id,
        iat: Math.floor((Date.now() + clockOffset) / 1000),
      })
      const response = await respond(created.requestUri, {
        vp_token: JSON.stringify({ pid: [vp] }),
        state: claims.state,
      })
      expect(response.statusCode).toBe(400)
      expect((await session(created.sessionId)).failureReason).toMatch(/did not verify.*expired/i)
    } finally {
      clockOffset = 0
      await app.inject({ method: 'PUT', url: '/api/credentials/pid', headers: auth, payload: config })
    }
  })

  it('transaction data aimed at an mso_mdoc credential is refused at request time (422)', async () => {
    const response = await post(
      '/api/presentation-requests',
      { presentationConfigId: 'mdl-plain', transactionData: [{ type: 'payment', credential_ids: ['mdl'] }] },
      tenants[rp] as Record<string, string>,
    )
    expect(response.statusCode).toBe(422)
    expect(response.json().errors[0].message).toContain('not supported: mdl')
  })

  it('a request nobody answered in time is expired, and a late response is refused', async () => {
    const issued = await issue(rp)
    const { created, claims } = await request('plain')
    const vp = await present(issued, { nonce: claims.nonce, aud: claims.client_id })
    clockOffset = 10 * 60_000 // past the 300 s lifetime
    try {
      expect((await session(created.sessionId)).status).toBe('expired')
      const late = await respond(created.requestUri, {
        vp_token: JSON.stringify({ pid: [vp] }),
        state: claims.state,
      })
      expect(late.statusCode).toBe(400)
      expect((await session(created.sessionId)).status).toBe('expired')
    } finally {
      clockOffset = 0
    }
  })

  it('S-122: an oversized response body is refused with 413 and changes nothing', async () => {
    const { created } = await request('plain')
    const response = await respond(created.requestUri, {
      vp_token: 'x'.repeat(DEFAULT_HTTP_LIMITS.bodyBytes),
      state: 'x',
    })
    expect(response.statusCode).toBe(413)
    expect(response.json().error).toBe('invalid_request')
    expect((await session(created.sessionId)).status).toBe('pending')
  })

  it('OpenID4VP §6.4 (V-26): credential_sets and claim_sets decide what must be presented', async () => {
    const auth = tenants[rp] as Record<string, string>
    const pidQuery = {
      id: 'pid',
      format: 'dc+sd-jwt',
      meta: { vct_values: [VCT] },
      claims: [
        { id: 'name', path: ['given_name'] },
        { id: 'age', path: ['age_over_18'] },
      ],
      claim_sets: [['name'], ['age']],
    }
    const mdlQuery = {
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: DOCTYPE },
      claims: [{ path: [NS, 'family_name'] }],
    }
    const either = { credentials: [pidQuery, mdlQuery], credential_sets: [{ options: [['pid'], ['mdl']] }] }
    const both = { credentials: [pidQuery, mdlQuery] }
    for (const [id, dcqlQuery] of [
      ['either', either],
      ['both', both],
    ] as const) {
      const created = await post(
        '/api/presentations',
        { id, dcqlQuery, keyChainId: 'keys', responseMode: 'direct_post' },
        auth,
      )
      expect(created.statusCode, created.body).toBe(201)
    }
    const issued = await issue(rp)
    const outcome = async (configId: string, disclose: Record<string, boolean>) => {
      const { created, claims } = await request(configId)
      const holder = new SDJwtVcInstance({
        hasher: digest,
        saltGenerator: generateSalt,
        kbSignAlg: 'ES256',
        kbSigner: kbSigner(issued.holder.privateKey),
      })
      const vp = await holder.present(issued.credential, disclose, {
        kb: { payload: { iat: Math.floor(Date.now() / 1000), nonce: claims.nonce, aud: claims.client_id } },
      })
      await respond(created.requestUri, { vp_token: JSON.stringify({ pid: [vp] }), state: claims.state })
      return session(created.sessionId)
    }
    // One option of the credential set and one claim set (age only) suffice.
    expect(await outcome('either', { age_over_18: true })).toMatchObject({ status: 'verified' })
    // No claim set satisfied when nothing is disclosed.
    expect(await outcome('either', {})).toMatchObject({
      status: 'failed',
      failureReason: 'no claim set of the query is satisfied',
    })
    // Without credential_sets every credential query is required.
    expect((await outcome('both', { age_over_18: true })).failureReason).toContain(
      'no option of a required credential set',
    )
  })

  it('Token Status List (V-33, S-121, F-33, S-124): a revoked credential fails; a valid entry passes; a list URI under the outbound rules; a list that cannot answer fails it', async () => {
    // An external issuer: its own CA (given to the configuration as trust anchor) and a status list server.
    const ca = await generateIssuerKeyPair('ES256')
    const caPem = await createCertificate({
      subjectPublicJwk: ca.publicJwk,
      issuerPrivateJwk: ca.privateJwk,
      subject: 'CN=External CA,C=DE',
      validityDays: 30,
      ca: true,
    })
    const leafKeys = await generateIssuerKeyPair('ES256')
    const leafPem = await createCertificate({
      subjectPublicJwk: leafKeys.publicJwk,
      issuerPrivateJwk: ca.privateJwk,
      issuerCertificate: caPem,
      subject: 'CN=External Issuer,C=DE',
      validityDays: 30,
      // SD-JWT VC §3.5 (S-131): the credentials' iss is a URI SAN of the leaf.
      uris: ['https://external.example.com'],
    })
    const signer: Signer = {
      alg: 'ES256',
      kid: leafKeys.kid,
      publicJwk: leafKeys.publicJwk,
      x5c: [new X509Certificate(leafPem).raw.toString('base64')],
      sign: async (data) =>
        signWithKeyObject(
          createPrivateKey({ key: leafKeys.privateJwk as never, format: 'jwk' }),
          'ES256',
          data,
        ),
    }
    let statusToken = ''
    /** Lists served at other paths than /status/1 (the F-33 and S-124 cases below). */
    const otherTokens: Record<string, string> = {}
    const paths: string[] = []
    const server = createHttpServer((req, res) => {
      paths.push(String(req.url))
      res.writeHead(200, { 'content-type': 'application/statuslist+jwt' })
      // S-121: a list larger than OUTBOUND_MAX_RESPONSE_BYTES (256 KiB by default).
      res.end(
        req.url === '/status/huge' ? 'e'.repeat(300 * 1024) : (otherTokens[String(req.url)] ?? statusToken),
      )
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/status/1`
      const lst = new StatusList([0, 0, 0, 1, 0, 0, 0, 0], 1).compressStatusList()
      const now = Math.floor(Date.now() / 1000)
      statusToken = await signJws(
        signer,
        { typ: 'statuslist+jwt', kid: signer.kid, x5c: signer.x5c },
        { sub: uri, iat: now, exp: now + 3600, status_list: { bits: 1, lst } },
      )
      const auth = tenants[rp] as Record<string, string>
      const dcqlQuery = {
        credentials: [
          {
            id: 'ext',
            format: 'dc+sd-jwt',
            meta: { vct_values: ['urn:external:1'] },
            claims: [{ path: ['age_over_18'] }],
          },
        ],
      }
      const created = await post(
        '/api/presentations',
        { id: 'external', dcqlQuery, keyChainId: 'keys', responseMode: 'direct_post', trustAnchors: [caPem] },
        auth,
      )
      expect(created.statusCode, created.body).toBe(201)

      const outcome = async (idx: number, statusUri = uri) => {
        const holder = await generateKeyPair('ES256')
        const credential = await issueSdJwtVc({
          signer,
          issuer: 'https://external.example.com',
          vct: 'urn:external:1',
          issuedAt: new Date(),
          expiresAt: new Date(Date.now() + 3_600_000),
          holderJwk: await exportJWK(holder.publicKey),
          claims: { age_over_18: true, status: { status_list: { idx, uri: statusUri } } },
          disclosable: [['age_over_18']],
        })
        const { created: req, claims } = await request('external')
        const vp = await present({ credential, holder }, { nonce: claims.nonce, aud: claims.client_id })
        const answered = await respond(req.requestUri, {
          vp_token: JSON.stringify({ ext: [vp] }),
          state: claims.state,
        })
        // What the wallet was told, next to the session the tenant reads.
        return { ...(await session(req.sessionId)), wallet: answered.json() }
      }
      const told = (error_description: string) => ({ error: 'invalid_request', error_description })
      const valid = await outcome(1)
      expect(valid.failureReason).toBeNull()
      expect(valid).toMatchObject({ status: 'verified' })
      // Issue 25: the CA given as trustAnchors is the pem list anchors-<hash>; a configuration the
      // previous version stored (the CA only in trust_anchors, no list) verifies after migration 0026.
      const listId = anchorsTrustListId([caPem])
      const stored = (await app.inject({ url: '/api/presentations/external', headers: auth })).json()
      expect(stored).toMatchObject({ trustListIds: [listId] })
      expect(stored.trustAnchors).toBeUndefined()
      const { db } = database
      await db.execute(
        sql`update presentation_configs set trust_anchors = array[${caPem}]::text[], trust_list_ids = null where tenant_id = ${rp} and id = 'external'`,
      )
      await db.execute(sql`delete from trust_lists where tenant_id = ${rp} and id = ${listId}`)
      await db.execute(sql.raw(readFileSync(join(migrationsFolder(), `${MIGRATION_0026}.sql`), 'utf8')))
      tenantChanged(rp)
      expect((await app.inject({ url: '/api/presentations/external', headers: auth })).json()).toMatchObject({
        trustListIds: [listId],
      })
      expect(await outcome(1)).toMatchObject({ status: 'verified', failureReason: null })
      expect(await outcome(3)).toMatchObject({
        status: 'failed',
        failureReason: 'the credential is revoked (INVALID)',
        wallet: told('the credential is revoked (INVALID)'),
      })
      // V-33: a list signed by a host whose clock runs 5 s ahead (or signed after the response
      // arrived) is within the verifier's clock leeway, not "not yet valid".
      statusToken = await signJws(
        signer,
        { typ: 'statuslist+jwt', kid: signer.kid, x5c: signer.x5c },
        { sub: uri, iat: now + 5, exp: now + 3600, status_list: { bits: 1, lst } },
      )
      expect(await outcome(1)).toMatchObject({ status: 'verified', failureReason: null })

      // S-121: the status list URI comes from the credential, so it gets the outbound rules. The
      // same local server, named by an IPv4-mapped address or as localhost (not allow-listed), is
      // never called; an oversized list is cut off.
      const port = (server.address() as AddressInfo).port
      const before = paths.length
      // Issue 19 item 7: the tenant reads why; the wallet (whoever made the credential) is told
      // only that the status could not be checked, nothing of the verifier's network or settings.
      const unchecked = told('the credential status could not be checked')
      expect(await outcome(1, `http://[::ffff:7f00:1]:${port}/status/1`)).toMatchObject({
        status: 'failed',
        failureReason: `the status list: '[::ffff:7f00:1]' is a non-public address (ipv4Mapped loopback); allow it with OUTBOUND_ALLOWED_HOSTS`,
        wallet: unchecked,
      })
      expect(await outcome(1, `http://localhost:${port}/status/1`)).toMatchObject({
        status: 'failed',
        failureReason: `the status list: 'localhost' is an internal name; allow it with OUTBOUND_ALLOWED_HOSTS`,
        wallet: unchecked,
      })
      expect(await outcome(1, `http://10.0.0.1:${port}/status/1`)).toMatchObject({
        status: 'failed',
        failureReason: `the status list: '10.0.0.1' is a non-public address (private); allow it with OUTBOUND_ALLOWED_HOSTS`,
        wallet: unchecked,
      })
      expect(await outcome(1, 'http://status.unresolvable.invalid/status/1')).toMatchObject({
        status: 'failed',
        failureReason: 'the status list could not be reached',
        wallet: unchecked,
      })
      expect(paths.length).toBe(before)
      expect(await outcome(1, `http://127.0.0.1:${port}/status/huge`)).toMatchObject({
        status: 'failed',
        failureReason: 'the status list answered more than 262144 bytes',
        wallet: unchecked,
      })
      expect(paths.slice(before)).toStrictEqual(['/status/huge'])

      // F-33: a list whose typ, sub, exp or signature is wrong, or without the credential's index,
      // leaves the status undetermined: the presentation fails.
      const listAt = async (
        path: string,
        header: Record<string, unknown>,
        claims: Record<string, unknown>,
        by: Signer = signer,
      ) => {
        const listUri = `http://127.0.0.1:${port}${path}`
        otherTokens[path] = await signJws(
          by,
          { typ: 'statuslist+jwt', kid: signer.kid, x5c: signer.x5c, ...header },
          { sub: listUri, iat: now, exp: now + 3600, status_list: { bits: 1, lst }, ...claims },
        )
        return listUri
      }
      const stranger = await generateIssuerKeyPair('ES256')
      const forger: Signer = {
        ...signer,
        sign: async (data) =>
          signWithKeyObject(
            createPrivateKey({ key: stranger.privateJwk as never, format: 'jwk' }),
            'ES256',
            data,
          ),
      }
      const failures = {
        'the status list token typ is not statuslist+jwt': await listAt('/status/typ', { typ: 'JWT' }, {}),
        'the status list token is for another URI': await listAt('/status/sub', {}, { sub: uri }),
        'the status list token has expired': await listAt('/status/exp', {}, { exp: now - 60 }),
        'the status list signature does not verify': await listAt('/status/sig', {}, {}, forger),
      }
      for (const [failureReason, listUri] of Object.entries(failures))
        expect(await outcome(1, listUri)).toMatchObject({
          status: 'failed',
          failureReason,
          wallet: unchecked,
        })
      expect(await outcome(8)).toMatchObject({
        status: 'failed',
        failureReason: 'the status list has no entry at index 8',
      })
      // S-124, TSL §11.1: 32 MiB of zero bytes deflate to about 32 KiB; inflated into one JS number
      // per entry they would be 2^28 of them. The verifier stops at its cap and lives on.
      const bomb = deflateSync(new Uint8Array(2 * MAX_STATUS_LIST_BYTES)).toString('base64url')
      const bombUri = await listAt('/status/bomb', {}, { status_list: { bits: 1, lst: bomb } })
      expect(await outcome(1, bombUri)).toMatchObject({
        status: 'failed',
        failureReason: `the status list inflates beyond ${MAX_STATUS_LIST_BYTES} bytes`,
      })
      expect(await outcome(1)).toMatchObject({ status: 'verified', failureReason: null })
    } finally {
      server.close()
    }
  })

  it('V-20: a JSON body at the response endpoint is refused; a request of another tenant is unknown', async () => {
    const { created } = await request('plain')
    const path = new URL(created.requestUri).pathname.replace('/requests/', '/responses/')
    const json = await app.inject({ method: 'POST', url: path, payload: { vp_token: '{}' } })
    expect(json.statusCode).toBe(400)
    expect((await session(created.sessionId)).failureReason, json.body).toBeNull()
    const elsewhere = await app.inject({
      method: 'POST',
      url: path.replace(rp, foreign),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'state=x',
    })
    expect(elsewhere.statusCode).toBe(400)
    expect((await session(created.sessionId)).failureReason).toBeNull()
  })
})
