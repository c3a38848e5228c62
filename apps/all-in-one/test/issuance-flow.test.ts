import { createHmac, randomBytes, X509Certificate } from 'node:crypto'
import { createServer as createHttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createMdocContext, deriveKeyMaterial } from '@credential-service/crypto'
import { createIssuanceSessionRepository } from '@credential-service/db-schema'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { TEST_MASTER_SECRET, testDatabases } from '@credential-service/db-schema/testing'
import { CoseKey, Holder, IssuerSigned } from '@owf/mdoc'
import { digest } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import type { FastifyInstance } from 'fastify'
import { base64url, compactVerify, createLocalJWKSet, exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, type ReceivedCall, startAllInOneWorld, startReceiver, webhookEvent } from './harness'

/** OpenID4VCI 1.0 §13.6.3: guesses at a transaction code before the offer is locked. */
const TX_CODE_ATTEMPTS = 5

const mdocContext = createMdocContext(CoseKey)

const PUBLIC_URL = 'http://localhost:3000'

describe.each(testDatabases())('OpenID4VCI pre-authorized flow on $name', (testDatabase) => {
  let app: FastifyInstance
  let database: DatabaseHandle
  let tenant: string
  let otherTenant: string
  let admin: Record<string, string>
  const issuerOf = (t: string) => `${PUBLIC_URL}/issuers/${t}`

  let root: Record<string, string>
  const logLines: string[] = []
  const logged = () => logLines.map((line) => JSON.parse(line) as Record<string, unknown>)

  beforeAll(async () => {
    // The attribute provider of these tests listens on loopback over http.
    const started = await startAllInOneWorld(
      testDatabase,
      'issuance',
      PUBLIC_URL,
      { OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' },
      undefined,
      logLines,
    )
    app = started.app
    database = started.database
    await app.ready()
    root = started.root
    tenant = started.tenants.a.id
    otherTenant = started.tenants.b.id
    admin = started.tenants.a.auth
  })
  afterAll(() => app.close())

  const offer = async (payload: Record<string, unknown> = {}) => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/offers',
      headers: admin,
      payload: {
        credentialConfigurationIds: ['pid'],
        claims: { pid: { given_name: 'Erika', family_name: 'Mustermann', address: { locality: 'Berlin' } } },
        ...payload,
      },
    })
    expect(response.statusCode, response.body).toBe(201)
    return response.json()
  }

  const tokenRequest = (t: string, form: Record<string, string>) =>
    app.inject({
      method: 'POST',
      url: `/issuers/${t}/token`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(form).toString(),
    })

  const redeem = async (
    created: { credentialOffer: Record<string, unknown> },
    txCode?: string,
    t = tenant,
  ) => {
    const grant = (created.credentialOffer.grants as Record<string, Record<string, string>>)[
      'urn:ietf:params:oauth:grant-type:pre-authorized_code'
    ]
    const response = await tokenRequest(t, {
      grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
      'pre-authorized_code': grant?.['pre-authorized_code'] as string,
      ...(txCode ? { tx_code: txCode } : {}),
    })
    return response
  }

  const nonce = async (t = tenant) =>
    (await app.inject({ method: 'POST', url: `/issuers/${t}/nonce` })).json().c_nonce as string

  async function holderKey() {
    const { privateKey, publicKey } = await generateKeyPair('ES256')
    return { privateKey, jwk: await exportJWK(publicKey) }
  }

  async function proof(options: {
    nonce: string
    aud?: string
    iat?: number
    alg?: string
    typ?: string
    key?: Awaited<ReturnType<typeof holderKey>>
  }) {
    const key = options.key ?? (await holderKey())
    const jwt = await new SignJWT({
      nonce: options.nonce,
      ...(options.iat === undefined ? {} : { iat: options.iat }),
    })
      .setProtectedHeader({ alg: 'ES256', typ: options.typ ?? 'openid4vci-proof+jwt', jwk: key.jwk })
      .setAudience(options.aud ?? issuerOf(tenant))
    if (options.iat === undefined) jwt.setIssuedAt()
    return { jwt: await jwt.sign(key.privateKey), key }
  }

  const credentialRequest = (accessToken: string, body: Record<string, unknown>, t = tenant) =>
    app.inject({
      method: 'POST',
      url: `/issuers/${t}/credential`,
      headers: { authorization: `Bearer ${accessToken}` },
      payload: body,
    })

  it('OID4VCI §4–§8: offer by reference → metadata → token with tx_code → nonce → batch credential, verified independently', async () => {
    const created = await offer({ txCode: { inputMode: 'numeric', length: 6, description: 'Sent by SMS' } })
    expect(created.txCode).toMatch(/^\d{6}$/)
    expect(created.offerUri).toBe(
      `openid-credential-offer://?credential_offer_uri=${encodeURIComponent(`${issuerOf(tenant)}/offers/${created.sessionId}`)}`,
    )

    // I-22: the offer by reference is JSON and carries the tx_code object.
    const byReference = await app.inject({ url: new URL(created.credentialOfferUri).pathname })
    expect(byReference.statusCode).toBe(200)
    expect(byReference.json()).toStrictEqual(created.credentialOffer)
    expect(
      byReference.json().grants['urn:ietf:params:oauth:grant-type:pre-authorized_code'].tx_code,
    ).toStrictEqual({
      input_mode: 'numeric',
      length: 6,
      description: 'Sent by SMS',
    })

    // I-01..I-07: metadata at the well-known path.
    const metadata = (
      await app.inject({ url: `/.well-known/openid-credential-issuer/issuers/${tenant}` })
    ).json()
    expect(metadata).toMatchObject({
      credential_issuer: issuerOf(tenant),
      credential_endpoint: `${issuerOf(tenant)}/credential`,
      nonce_endpoint: `${issuerOf(tenant)}/nonce`,
      batch_credential_issuance: { batch_size: 2 },
      credential_configurations_supported: {
        pid: {
          format: 'dc+sd-jwt',
          vct: 'urn:eudi:pid:1',
          scope: 'pid',
          cryptographic_binding_methods_supported: ['jwk'],
          credential_signing_alg_values_supported: ['ES256'],
          // I-07 / RFC 9864: fully specified JOSE names, Ed25519 rather than the polymorphic EdDSA.
          proof_types_supported: {
            jwt: { proof_signing_alg_values_supported: ['ES256', 'ES384', 'Ed25519'] },
          },
        },
        // I-08 / OpenID4VCI 1.0 App. A.2.2: the IssuerAuth header's COSE id and the fully specified ESP256.
        mdl: { format: 'mso_mdoc', credential_signing_alg_values_supported: [-7, -9] },
      },
      notification_endpoint: `${issuerOf(tenant)}/notification`,
    })
    expect(metadata.credential_configurations_supported.pid.credential_metadata.claims).toContainEqual({
      path: ['given_name'],
      mandatory: true,
    })
    const signed = await app.inject({
      url: `/.well-known/openid-credential-issuer/issuers/${tenant}`,
      headers: { accept: 'application/jwt' },
    })
    const jwks = (await app.inject({ url: `/issuers/${tenant}/jwks` })).json()
    const { protectedHeader } = await compactVerify(signed.body, createLocalJWKSet(jwks))
    expect(protectedHeader.typ).toBe('openidvci-issuer-metadata+jwt')

    const tokenResponse = await redeem(created, created.txCode)
    expect(tokenResponse.statusCode, tokenResponse.body).toBe(200)
    expect(tokenResponse.headers['cache-control']).toBe('no-store')
    const accessToken = tokenResponse.json().access_token

    const c_nonce = await nonce()
    const first = await proof({ nonce: c_nonce })
    const second = await proof({ nonce: c_nonce })
    const issued = await credentialRequest(accessToken, {
      credential_configuration_id: 'pid',
      proofs: { jwt: [first.jwt, second.jwt] },
    })
    expect(issued.statusCode, issued.body).toBe(200)
    const credentials = issued.json().credentials as { credential: string }[]
    expect(credentials).toHaveLength(2)

    // Independent verification with @sd-jwt/sd-jwt-vc against the published JWKS.
    const keySet = createLocalJWKSet(jwks)
    const verifier = new SDJwtVcInstance({
      hasher: digest,
      verifier: async (data: string, signature: string) => {
        const [header, payload] = data.split('.')
        await compactVerify(`${header}.${payload}.${signature}`, keySet)
        return true
      },
    })
    for (const [index, { credential }] of credentials.entries()) {
      const { payload, header } = await verifier.verify(credential)
      expect(header).toMatchObject({ typ: 'dc+sd-jwt', alg: 'ES256', x5c: [expect.any(String)] })
      expect(payload).toMatchObject({
        iss: issuerOf(tenant),
        vct: 'urn:eudi:pid:1',
        given_name: 'Erika',
        family_name: 'Mustermann',
        address: { locality: 'Berlin' },
        issuing_country: 'DE',
        cnf: { jwk: [first, second][index]?.key.jwk },
      })
      // Disclosable claims are digests in the signed payload, not plain values.
      const signedPayload = JSON.parse(
        new TextDecoder().decode(base64url.decode(credential.split('.')[1] as string)),
      )
      expect(signedPayload.given_name).toBeUndefined()
      expect(signedPayload.issuing_country).toBe('DE')
      expect(signedPayload._sd.length).toBeGreaterThanOrEqual(4) // 2 claims + 2 decoys
      // F-07 / RFC 9901 §9.3: each disclosure's salt carries at least 128 bits.
      const disclosures = credential.split('~').slice(1).filter(Boolean)
      expect(disclosures).toHaveLength(3)
      for (const disclosure of disclosures) {
        const [salt] = JSON.parse(new TextDecoder().decode(base64url.decode(disclosure))) as [string]
        expect(base64url.decode(salt).length).toBeGreaterThanOrEqual(16)
      }
    }

    const session = await app.inject({ url: `/api/sessions/${created.sessionId}`, headers: admin })
    expect(session.json()).toMatchObject({
      id: created.sessionId,
      status: 'completed',
      txCodeRequired: true,
      issuedConfigurationIds: ['pid'],
    })
    expect(session.body).not.toContain('Erika')
  })

  it('ISO 18013-5 §9.1.2.4: an mso_mdoc credential verifies with @owf/mdoc: MSO signature, x5chain, value digests', async () => {
    const created = await offer({
      credentialConfigurationIds: ['mdl'],
      claims: { mdl: { 'org.iso.18013.5.1': { family_name: 'Mustermann', birth_date: '1964-08-12' } } },
    })
    const accessToken = (await redeem(created)).json().access_token
    const holder = await proof({ nonce: await nonce() })
    const issued = await credentialRequest(accessToken, {
      credential_configuration_id: 'mdl',
      proofs: { jwt: [holder.jwt] },
    })
    expect(issued.statusCode, issued.body).toBe(200)
    const encoded = issued.json().credentials[0].credential as string

    const chain = (await app.inject({ url: '/api/key-chains/pid-keys', headers: admin })).json()
    const root = new X509Certificate(chain.rootCertificate).raw
    const checks: { status: string; check: string }[] = []
    await Holder.verifyIssuerSigned(
      {
        issuerSigned: encoded,
        trustedCertificates: [new Uint8Array(root)],
        verificationCallback: (item) => checks.push(item),
      },
      mdocContext,
    )
    expect(checks.filter((c) => c.status === 'FAILED')).toStrictEqual([])
    const issuerSigned = IssuerSigned.fromEncodedForOid4Vci(encoded)
    expect(issuerSigned.issuerAuth.mobileSecurityObject.docType).toBe('org.iso.18013.5.1.mDL')
    const claims = issuerSigned.getPrettyClaims('org.iso.18013.5.1') as Record<string, unknown>
    expect(claims.family_name).toBe('Mustermann')
    expect(claims.age_over_18).toBe(true)
    expect(String(claims.birth_date)).toContain('1964-08-12')
    // The device key is the proof key (holder binding).
    const deviceKey = issuerSigned.issuerAuth.mobileSecurityObject.deviceKeyInfo.deviceKey.jwk
    expect({ x: deviceKey.x, y: deviceKey.y }).toStrictEqual({ x: holder.key.jwk.x, y: holder.key.jwk.y })
  })

  it('F-10 / SD-JWT VC §3.2.2.4: a configuration with no disclosable field issues no _sd, no decoys, no disclosures', async () => {
    const saved = await app.inject({
      method: 'POST',
      url: '/api/credentials',
      headers: admin,
      payload: {
        id: 'plain',
        config: { format: 'dc+sd-jwt', vct: 'urn:example:plain:1' },
        keyChainId: 'pid-keys',
        fields: [
          { path: ['given_name'], type: 'string', mandatory: true },
          { path: ['address', 'locality'], type: 'string' },
        ],
      },
    })
    expect(saved.statusCode, saved.body).toBe(201)
    const created = await offer({
      credentialConfigurationIds: ['plain'],
      claims: { plain: { given_name: 'Erika', address: { locality: 'Berlin' } } },
    })
    const accessToken = (await redeem(created)).json().access_token
    const issued = await credentialRequest(accessToken, {
      credential_configuration_id: 'plain',
      proofs: { jwt: [(await proof({ nonce: await nonce() })).jwt] },
    })
    expect(issued.statusCode, issued.body).toBe(200)
    const credential = issued.json().credentials[0].credential as string
    const [jwt, ...rest] = credential.split('~')
    expect(rest).toStrictEqual(['']) // `<issuer-jwt>~`: no disclosure
    const payload = JSON.parse(
      new TextDecoder().decode(base64url.decode((jwt as string).split('.')[1] as string)),
    )
    expect(JSON.stringify(payload)).not.toContain('_sd')
    expect(payload).toMatchObject({ given_name: 'Erika', address: { locality: 'Berlin' } })
  })

  it('I-08 / RFC 9864, issue 42 item 6: an mdoc signed with an Ed25519 key advertises the -8 its IssuerAuth header carries (ISO 18013-5) and its fully specified -19; I-64: Ed25519 and EdDSA proofs are accepted', async () => {
    const chain = await app.inject({
      method: 'POST',
      url: '/api/key-chains',
      headers: admin,
      payload: {
        source: 'generate',
        id: 'ed-keys',
        algorithm: 'EdDSA',
        certificate: { mode: 'internal-ca', subject: 'CN=Ed Issuer,C=DE' },
      },
    })
    expect(chain.statusCode, chain.body).toBe(201)
    const saved = await app.inject({
      method: 'POST',
      url: '/api/credentials',
      headers: admin,
      payload: {
        id: 'mdl-ed',
        config: { format: 'mso_mdoc', docType: 'org.example.ed.1' },
        keyChainId: 'ed-keys',
        fields: [{ path: ['family_name'], type: 'string', namespace: 'org.example.ed.1' }],
      },
    })
    expect(saved.statusCode, saved.body).toBe(201)
    const metadata = (
      await app.inject({ url: `/.well-known/openid-credential-issuer/issuers/${tenant}` })
    ).json()
    expect(
      metadata.credential_configurations_supported['mdl-ed'].credential_signing_alg_values_supported,
    ).toStrictEqual([-8, -19])

    for (const alg of ['Ed25519', 'EdDSA']) {
      const created = await offer()
      const accessToken = (await redeem(created)).json().access_token
      const { privateKey, publicKey } = await generateKeyPair('Ed25519')
      const jwt = await new SignJWT({ nonce: await nonce() })
        .setProtectedHeader({ alg, typ: 'openid4vci-proof+jwt', jwk: await exportJWK(publicKey) })
        .setAudience(issuerOf(tenant))
        .setIssuedAt()
        .sign(privateKey)
      const issued = await credentialRequest(accessToken, {
        credential_configuration_id: 'pid',
        proofs: { jwt: [jwt] },
      })
      expect(issued.statusCode, `${alg}: ${issued.body}`).toBe(200)
    }
  })

  it('I-23: a pre-authorized code is single use; the offer is 404 once redeemed', async () => {
    const created = await offer()
    expect((await redeem(created)).statusCode).toBe(200)
    const again = await redeem(created)
    expect(again.statusCode).toBe(400)
    expect(again.json().error).toBe('invalid_grant')
    expect((await app.inject({ url: new URL(created.credentialOfferUri).pathname })).statusCode).toBe(404)
    // I-22: an offer id that never existed is 404 too.
    expect((await app.inject({ url: `/issuers/${tenant}/offers/ses_doesnotexist` })).statusCode).toBe(404)
  })

  describe('tx_code (S-33, S-34)', () => {
    const oauthError = (error: string) => ({ error, error_description: expect.any(String) })
    const sessionRow = async (sessionId: string) =>
      createIssuanceSessionRepository(database.db, tenant).get(sessionId)
    const wrongCodeFor = (txCode: string) => (txCode === '0000' ? '1111' : '0000')

    it('S-33: a wrong tx_code is invalid_grant; a missing one, or one sent to an offer without tx_code, is invalid_request and leaves the code usable', async () => {
      const withCode = await offer({ txCode: { length: 4 } })
      const wrong = await redeem(withCode, wrongCodeFor(withCode.txCode))
      expect(wrong.statusCode).toBe(400)
      expect(wrong.json()).toStrictEqual(oauthError('invalid_grant'))
      const missing = await redeem(withCode)
      expect(missing.statusCode).toBe(400)
      expect(missing.json()).toStrictEqual(oauthError('invalid_request'))
      expect((await redeem(withCode, withCode.txCode)).statusCode).toBe(200)

      const withoutCode = await offer()
      const unexpected = await redeem(withoutCode, '1234')
      expect(unexpected.statusCode).toBe(400)
      expect(unexpected.json()).toStrictEqual(oauthError('invalid_request'))
      expect((await sessionRow(withoutCode.sessionId))?.status).toBe('offered')
      expect((await redeem(withoutCode)).statusCode).toBe(200)
    })

    it('S-34: five wrong codes lock the offer; the right one is then invalid_grant too', async () => {
      const created = await offer({ txCode: { length: 4 } })
      for (let attempt = 1; attempt <= TX_CODE_ATTEMPTS; attempt++) {
        const response = await redeem(created, wrongCodeFor(created.txCode))
        expect(response.json()).toStrictEqual(oauthError('invalid_grant'))
      }
      const locked = await redeem(created, created.txCode)
      expect(locked.statusCode).toBe(400)
      expect(locked.json()).toStrictEqual(oauthError('invalid_grant'))
      const session = (await app.inject({ url: `/api/sessions/${created.sessionId}`, headers: admin })).json()
      expect(session).toMatchObject({ status: 'failed', failureReason: 'too many wrong transaction codes' })
    })

    it('S-34: the right code on the fifth attempt, after four wrong ones, still redeems', async () => {
      const created = await offer({ txCode: { length: 4 } })
      for (let attempt = 1; attempt < TX_CODE_ATTEMPTS; attempt++)
        expect((await redeem(created, wrongCodeFor(created.txCode))).statusCode).toBe(400)
      expect((await redeem(created, created.txCode)).statusCode).toBe(200)
      expect(await sessionRow(created.sessionId)).toMatchObject({
        status: 'token_issued',
        txCodeAttempts: TX_CODE_ATTEMPTS,
      })
    })

    it('S-34 / OID4VCI §13.6.3: 100 wrong guesses at once evaluate at most five; then a burst of right codes is refused', async () => {
      const created = await offer({ txCode: { length: 6 } })
      const wrong = String((Number(created.txCode) + 1) % 1_000_000).padStart(6, '0')
      const guesses = await Promise.all(Array.from({ length: 100 }, () => redeem(created, wrong)))
      for (const response of guesses) {
        expect(response.statusCode).toBe(400)
        expect(response.json()).toStrictEqual(oauthError('invalid_grant'))
      }
      // Every evaluated guess is counted in the statement that judges it: five, never more.
      expect(await sessionRow(created.sessionId)).toMatchObject({
        status: 'failed',
        txCodeAttempts: TX_CODE_ATTEMPTS,
        tokenIssuedAt: null,
      })
      const right = await Promise.all(Array.from({ length: 20 }, () => redeem(created, created.txCode)))
      for (const response of right) {
        expect(response.statusCode).toBe(400)
        expect(response.json()).toStrictEqual(oauthError('invalid_grant'))
      }
      expect(await sessionRow(created.sessionId)).toMatchObject({
        status: 'failed',
        txCodeAttempts: TX_CODE_ATTEMPTS,
        tokenIssuedAt: null,
      })
    })

    it('S-34: 60 wrong guesses with the right code sent last, all in flight at once: five are evaluated and the right code is refused', async () => {
      const created = await offer({ txCode: { length: 4 } })
      // Sent in one tick, the right code last: five wrong guesses reach the offer before it, so
      // a token here means a guess was judged without being counted.
      const codes = [...Array.from({ length: 60 }, () => wrongCodeFor(created.txCode)), created.txCode]
      const responses = await Promise.all(codes.map((code) => redeem(created, code)))
      for (const response of responses) {
        expect(response.statusCode).toBe(400)
        expect(response.json()).toStrictEqual(oauthError('invalid_grant'))
      }
      expect(await sessionRow(created.sessionId)).toMatchObject({
        status: 'failed',
        txCodeAttempts: TX_CODE_ATTEMPTS,
        tokenIssuedAt: null,
      })
    })
  })

  describe('credential request errors (OID4VCI §8.3.1.2)', () => {
    let accessToken: string
    beforeAll(async () => {
      accessToken = (await redeem(await offer())).json().access_token
    })

    const expectError = async (
      body: Record<string, unknown>,
      error: string,
      t = tenant,
      tokenValue = accessToken,
    ) => {
      const response = await credentialRequest(tokenValue, body, t)
      expect(response.json().error, response.body).toBe(error)
      return response
    }

    it('a reused nonce is invalid_nonce', async () => {
      const c_nonce = await nonce()
      // Another session spends the nonce, so this block's session stays unissued.
      const ok = await credentialRequest((await redeem(await offer())).json().access_token, {
        credential_configuration_id: 'pid',
        proofs: { jwt: [(await proof({ nonce: c_nonce })).jwt] },
      })
      expect(ok.statusCode).toBe(200)
      await expectError(
        { credential_configuration_id: 'pid', proofs: { jwt: [(await proof({ nonce: c_nonce })).jwt] } },
        'invalid_nonce',
      )
    })

    it('OID4VCI §7.2 (I-50, S-126, issue 44): the nonce endpoint answers distinct values and stores nothing', async () => {
      // This world counts rate limits in memory (no DATABASE_URL): any statement would be the nonce's.
      const before = database.stats().statements
      const values = await Promise.all(Array.from({ length: 20 }, () => nonce(tenant)))
      expect(database.stats().statements - before).toBe(0)
      expect(new Set(values).size).toBe(20)
    })

    it('OID4VCI §7, I-51, S-21: an expired nonce, or one whose expiry was moved, is invalid_nonce', async () => {
      // A c_nonce as the issuer makes it (README, "c_nonce"): <expiry base36>.<random>.<MAC>, the MAC an
      // HMAC-SHA256 under the MASTER_SECRET's `c-nonce` key over "<tenant>|<expiry>.<random>".
      const key = deriveKeyMaterial(TEST_MASTER_SECRET, 'c-nonce')
      const made = (expiry: number) => {
        const body = `${expiry.toString(36)}.${randomBytes(18).toString('base64url')}`
        const mac = createHmac('sha256', key).update(`${tenant}|${body}`).digest().subarray(0, 16)
        return `${body}.${mac.toString('base64url')}`
      }
      const expired = made(Math.floor(Date.now() / 1000) - 1)
      await expectError(
        { credential_configuration_id: 'pid', proofs: { jwt: [(await proof({ nonce: expired })).jwt] } },
        'invalid_nonce',
      )
      // The same construction with a live expiry is accepted: the refusal above was the expiry's.
      const live = made(Math.floor(Date.now() / 1000) + 60)
      const ok = await credentialRequest((await redeem(await offer())).json().access_token, {
        credential_configuration_id: 'pid',
        proofs: { jwt: [(await proof({ nonce: live })).jwt] },
      })
      expect(ok.statusCode).toBe(200)
      // An issued nonce with its expiry pushed out no longer carries a valid MAC.
      const [expiry, ...rest] = (await nonce(tenant)).split('.')
      const moved = [(Number.parseInt(String(expiry), 36) + 3600).toString(36), ...rest].join('.')
      await expectError(
        { credential_configuration_id: 'pid', proofs: { jwt: [(await proof({ nonce: moved })).jwt] } },
        'invalid_nonce',
      )
    })

    it('a nonce we never issued, or one from another tenant, is invalid_nonce', async () => {
      await expectError(
        { credential_configuration_id: 'pid', proofs: { jwt: [(await proof({ nonce: 'made-up' })).jwt] } },
        'invalid_nonce',
      )
      const foreign = await nonce(otherTenant)
      await expectError(
        { credential_configuration_id: 'pid', proofs: { jwt: [(await proof({ nonce: foreign })).jwt] } },
        'invalid_nonce',
      )
    })

    it('proofs with a wrong aud, a stale iat, typ, alg none or HS256, or a mismatched key are invalid_proof', async () => {
      const cases = [
        (await proof({ nonce: await nonce(), aud: 'https://evil.example' })).jwt,
        (await proof({ nonce: await nonce(), iat: Math.floor(Date.now() / 1000) - 3600 })).jwt,
        (await proof({ nonce: await nonce(), typ: 'JWT' })).jwt,
      ]
      const key = await holderKey()
      const header = (alg: string) =>
        base64url.encode(JSON.stringify({ alg, typ: 'openid4vci-proof+jwt', jwk: key.jwk }))
      const body = base64url.encode(
        JSON.stringify({ aud: issuerOf(tenant), iat: Math.floor(Date.now() / 1000), nonce: await nonce() }),
      )
      cases.push(`${header('none')}.${body}.`)
      cases.push(`${header('HS256')}.${body}.${base64url.encode('not-a-mac-anyone-checks')}`)
      // Signed by one key, claiming another in the header.
      const honest = await proof({ nonce: await nonce() })
      const other = await holderKey()
      const [, payload, signature] = honest.jwt.split('.')
      cases.push(
        `${base64url.encode(JSON.stringify({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: other.jwk }))}.${payload}.${signature}`,
      )
      for (const jwt of cases)
        await expectError({ credential_configuration_id: 'pid', proofs: { jwt: [jwt] } }, 'invalid_proof')
    })

    it('more proofs than the batch size is invalid_credential_request; a missing proof is invalid_proof', async () => {
      const c_nonce = await nonce()
      const proofs = await Promise.all([1, 2, 3].map(async () => (await proof({ nonce: c_nonce })).jwt))
      await expectError(
        { credential_configuration_id: 'pid', proofs: { jwt: proofs } },
        'invalid_credential_request',
      )
      await expectError({ credential_configuration_id: 'pid' }, 'invalid_proof')
    })

    it('S-08 / OID4VCI App. F.1: a proof header naming its key twice (jwk with kid, jwk with x5c) is invalid_proof', async () => {
      const c_nonce = await nonce()
      const key = await holderKey()
      for (const extraHeader of [{ kid: 'holder-key-1' }, { x5c: ['MIIBszCCAVmgAwIBAgIUQ'] }]) {
        const jwt = await new SignJWT({ nonce: c_nonce })
          .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: key.jwk, ...extraHeader })
          .setAudience(issuerOf(tenant))
          .setIssuedAt()
          .sign(key.privateKey)
        const response = await expectError(
          { credential_configuration_id: 'pid', proofs: { jwt: [jwt] } },
          'invalid_proof',
        )
        expect(response.statusCode).toBe(400)
      }
    })

    it('S-27 / OID4VCI §8.2: proofs with two proof types, or not an object, are invalid_credential_request', async () => {
      const { jwt } = await proof({ nonce: await nonce() })
      for (const proofs of [{ jwt: [jwt], attestation: ['eyJ.eyJ.sig'] }, [jwt], 'jwt']) {
        const response = await expectError(
          { credential_configuration_id: 'pid', proofs },
          'invalid_credential_request',
        )
        expect(response.statusCode).toBe(400)
        expect(response.json()).toStrictEqual({
          error: 'invalid_credential_request',
          error_description: expect.any(String),
        })
      }
    })

    it('S-28 / OID4VCI §8.2: credential_identifier with credential_configuration_id is invalid_credential_request; alone it is unknown_credential_identifier', async () => {
      const { jwt } = await proof({ nonce: await nonce() })
      await expectError(
        { credential_identifier: 'pid-1', credential_configuration_id: 'pid', proofs: { jwt: [jwt] } },
        'invalid_credential_request',
      )
      await expectError(
        { credential_identifier: 'pid-1', proofs: { jwt: [jwt] } },
        'unknown_credential_identifier',
      )
    })

    it('I-62 / S-29 / OID4VCI §8.3.1.1: a configuration that exists but is not covered by the access token is 403 insufficient_scope with a Bearer challenge (RFC 6750 §3.1)', async () => {
      const response = await expectError(
        {
          credential_configuration_id: 'mdl',
          proofs: { jwt: [(await proof({ nonce: await nonce() })).jwt] },
        },
        'insufficient_scope',
      )
      expect(response.statusCode).toBe(403)
      expect(response.json().error_description).toBe("this access token does not cover 'mdl'")
      expect(response.headers['www-authenticate']).toMatch(/^Bearer error="insufficient_scope"/)
    })

    it('I-62: an unknown configuration is 400 unknown_credential_configuration; I-69: the echoed id is printable ASCII in error_description', async () => {
      const unknown = await expectError(
        {
          credential_configuration_id: 'no-such-config',
          proofs: { jwt: [(await proof({ nonce: await nonce() })).jwt] },
        },
        'unknown_credential_configuration',
      )
      expect(unknown.statusCode).toBe(400)
      const echoed = await expectError(
        { credential_configuration_id: 'pïd"\\\u0007✓', proofs: { jwt: ['x'] } },
        'unknown_credential_configuration',
      )
      expect(echoed.json().error_description).toBe("no credential configuration 'p?d'???'")
    })

    it('a token of tenant A at tenant B is invalid_token with WWW-Authenticate', async () => {
      const response = await expectError(
        {
          credential_configuration_id: 'pid',
          proofs: {
            jwt: [(await proof({ nonce: await nonce(otherTenant), aud: issuerOf(otherTenant) })).jwt],
          },
        },
        'invalid_token',
        otherTenant,
      )
      expect(response.statusCode).toBe(401)
      expect(response.headers['www-authenticate']).toContain('error="invalid_token"')
    })
  })

  describe('one issuance per configuration and session (S-27, OID4VCI §8)', () => {
    const deniedBody = { error: 'credential_request_denied', error_description: expect.any(String) }
    const issue = async (accessToken: string, configurationId: string, proofs = 1) => {
      const c_nonce = await nonce()
      const jwts = await Promise.all(
        Array.from({ length: proofs }, async () => (await proof({ nonce: c_nonce })).jwt),
      )
      return credentialRequest(accessToken, {
        credential_configuration_id: configurationId,
        proofs: { jwt: jwts },
      })
    }
    const sessionOf = async (sessionId: string) =>
      (await app.inject({ url: `/api/sessions/${sessionId}`, headers: admin })).json()

    it('S-27: the token of a completed session mints no more credentials (credential_request_denied), and still takes the notification', async () => {
      const created = await offer()
      const accessToken = (await redeem(created)).json().access_token
      const first = await issue(accessToken, 'pid', 2)
      expect(first.statusCode, first.body).toBe(200)
      expect(first.json().credentials).toHaveLength(2)
      for (const proofs of [1, 2]) {
        const again = await issue(accessToken, 'pid', proofs)
        expect(again.statusCode).toBe(400)
        expect(again.json()).toStrictEqual(deniedBody)
      }
      const session = await sessionOf(created.sessionId)
      expect(session).toMatchObject({ status: 'completed', issuedConfigurationIds: ['pid'] })
      expect(session.notifications).toHaveLength(1)
      const notified = await app.inject({
        method: 'POST',
        url: `/issuers/${tenant}/notification`,
        headers: { authorization: `Bearer ${accessToken}` },
        payload: { notification_id: first.json().notification_id, event: 'credential_accepted' },
      })
      expect(notified.statusCode).toBe(204)
    })

    it('S-27: with two configurations offered, each is issued once; a repeat is refused while the other is still open', async () => {
      const created = await offer({
        credentialConfigurationIds: ['pid', 'mdl'],
        claims: {
          pid: { given_name: 'Erika', family_name: 'Mustermann' },
          mdl: { 'org.iso.18013.5.1': { family_name: 'Mustermann' } },
        },
      })
      const accessToken = (await redeem(created)).json().access_token
      expect((await issue(accessToken, 'pid')).statusCode).toBe(200)
      expect((await issue(accessToken, 'pid')).json()).toStrictEqual(deniedBody)
      expect((await sessionOf(created.sessionId)).status).toBe('credential_issued')
      expect((await issue(accessToken, 'mdl')).statusCode).toBe(200)
      expect((await issue(accessToken, 'mdl')).json()).toStrictEqual(deniedBody)
      const session = await sessionOf(created.sessionId)
      expect(session).toMatchObject({ status: 'completed' })
      expect([...session.issuedConfigurationIds].sort()).toStrictEqual(['mdl', 'pid'])
      expect(session.notifications).toHaveLength(2)
    })

    it('S-27: parallel credential requests with valid proofs for one configuration: exactly one gets credentials', async () => {
      for (let round = 0; round < 3; round++) {
        const created = await offer()
        const accessToken = (await redeem(created)).json().access_token
        const responses = await Promise.all([1, 2, 3, 4].map(() => issue(accessToken, 'pid')))
        const issued = responses.filter((response) => response.statusCode === 200)
        expect(issued).toHaveLength(1)
        for (const response of responses.filter((r) => r.statusCode !== 200)) {
          expect(response.statusCode).toBe(400)
          expect(response.json()).toStrictEqual(deniedBody)
        }
        const session = await sessionOf(created.sessionId)
        expect(session).toMatchObject({ status: 'completed', issuedConfigurationIds: ['pid'] })
        expect(session.notifications).toHaveLength(1)
      }
    })
  })

  it('OID4VCI §11: a notification is recorded on the session and delivered to the webhook, HMAC-signed', async () => {
    // The first attempt fails: a retry must follow.
    const receiver = await startReceiver((call) => (call === 1 ? 503 : 204))
    const { received } = receiver
    try {
      const hook = await app.inject({
        method: 'POST',
        url: '/api/webhook-endpoints',
        headers: admin,
        // Notifications only: credential.issued would take the receiver's first (failing) answer.
        payload: {
          id: 'events',
          url: `${receiver.url}/events`,
          auth: { type: 'hmac' },
          events: ['issuance.notification'],
        },
      })
      const { signingSecret } = hook.json()
      const withHook = (await app.inject({ url: '/api/credentials/pid', headers: admin })).json()
      const { createdAt: _c, updatedAt: _u, ...config } = withHook
      await app.inject({
        method: 'PUT',
        url: '/api/credentials/pid',
        headers: admin,
        payload: { ...config, webhookEndpointId: 'events' },
      })

      const created = await offer()
      const accessToken = (await redeem(created)).json().access_token
      const issued = await credentialRequest(accessToken, {
        credential_configuration_id: 'pid',
        proofs: { jwt: [(await proof({ nonce: await nonce() })).jwt] },
      })
      const notificationId = issued.json().notification_id
      expect(notificationId).toMatch(/^ntf_/)
      const notify = (body: Record<string, unknown>, t = accessToken) =>
        app.inject({
          method: 'POST',
          url: `/issuers/${tenant}/notification`,
          headers: { authorization: `Bearer ${t}` },
          payload: body,
        })
      expect(
        (await notify({ notification_id: 'ntf_unknown', event: 'credential_accepted' })).json().error,
      ).toBe('invalid_notification_id')
      expect(
        (await notify({ notification_id: notificationId, event: 'credential_liked' })).json().error,
      ).toBe('invalid_notification_request')
      expect(
        (await notify({ notification_id: notificationId, event: 'credential_accepted' })).statusCode,
      ).toBe(204)

      let session: { notifications?: { delivery: { status: string } }[] } = {}
      for (let i = 0; i < 50; i++) {
        session = (await app.inject({ url: `/api/sessions/${created.sessionId}`, headers: admin })).json()
        if (session.notifications?.[0]?.delivery.status === 'delivered') break
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(session.notifications).toStrictEqual([
        {
          credentialConfigurationId: 'pid',
          event: 'credential_accepted',
          receivedAt: expect.any(String),
          delivery: { status: 'delivered', attempts: 2, error: null },
        },
      ])
      // Issue 13: the failed first attempt is logged with its endpoint and cause.
      expect(logged()).toContainEqual(
        expect.objectContaining({
          msg: 'webhook delivery failed',
          webhookEndpointId: 'events',
          tenantId: tenant,
          attempt: 1,
          status: 503,
        }),
      )
      const last = received.at(-1) as ReceivedCall
      expect(webhookEvent(last)).toMatchObject({
        type: 'issuance.notification',
        sessionId: created.sessionId,
        event: 'credential_accepted',
      })
      const expected = createHmac('sha256', signingSecret)
        .update(`${last.headers['x-timestamp']}.${last.body}`)
        .digest('hex')
      expect(last.headers['x-signature']).toBe(`sha256=${expected}`)
      await app.inject({ method: 'PUT', url: '/api/credentials/pid', headers: admin, payload: config })
    } finally {
      receiver.close()
    }
  })

  it('sessions list with pagination and a status filter', async () => {
    const open = await offer()
    const listed = (
      await app.inject({ url: '/api/sessions?status=offered&limit=100', headers: admin })
    ).json()
    expect(listed.items.every((item: { status: string }) => item.status === 'offered')).toBe(true)
    expect(listed.items.map((item: { id: string }) => item.id)).toContain(open.sessionId)
    const failed = (await app.inject({ url: '/api/sessions?status=failed&limit=100', headers: admin })).json()
    expect(failed.items.map((item: { id: string }) => item.id)).not.toContain(open.sessionId)
    expect((await app.inject({ url: '/api/sessions?status=bogus', headers: admin })).statusCode).toBe(400)
  })

  describe('offers (management)', () => {
    it('spec §5 rule 5: a client restricted to other configurations gets 403', async () => {
      const restricted = (
        await app.inject({
          method: 'POST',
          url: `/api/tenants/${tenant}/clients`,
          headers: root,
          payload: { roles: ['issuance:offer'], allowedIssuanceConfigs: ['mdl'] },
        })
      ).json()
      const auth = await bearer(app, restricted.clientId, restricted.clientSecret)
      const response = await app.inject({
        method: 'POST',
        url: '/api/offers',
        headers: auth,
        payload: { credentialConfigurationIds: ['pid'] },
      })
      expect(response.statusCode).toBe(403)
    })

    it('claims failing the derived schema are a 422 naming each claim; unknown configurations too', async () => {
      const response = await app.inject({
        method: 'POST',
        url: '/api/offers',
        headers: admin,
        payload: {
          credentialConfigurationIds: ['pid', 'nope'],
          claims: { pid: { given_name: 42, nickname: 'E' } },
        },
      })
      expect(response.statusCode).toBe(422)
      expect(
        response
          .json()
          .errors.map((e: { path: string }) => e.path)
          .sort(),
      ).toStrictEqual([
        'body.claims.pid.family_name',
        'body.claims.pid.given_name',
        'body.claims.pid.nickname',
        'body.credentialConfigurationIds.1',
      ])
    })

    it('claims come from the attribute provider at the credential request (API key sent); a provider that is down fails the session and the request', async () => {
      const seen: { key: unknown; body: unknown }[] = []
      const server = createHttpServer((req, res) => {
        let raw = ''
        req.on('data', (chunk) => {
          raw += chunk
        })
        req.on('end', () => {
          seen.push({ key: req.headers['x-api-key'], body: JSON.parse(raw) })
          res.writeHead(200, { 'content-type': 'application/json' })
          // The second configuration's provider answers a wrong type: it must never reach a credential.
          res.end(
            JSON.stringify(
              JSON.parse(raw).credentialConfigurationId === 'from-bad'
                ? { given_name: 42 }
                : { given_name: 'Max' },
            ),
          )
        })
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const port = (server.address() as AddressInfo).port
      try {
        for (const [id, url] of [
          ['hr', `http://127.0.0.1:${port}/claims`],
          ['bad', `http://127.0.0.1:${port}/claims`],
          ['down', 'http://127.0.0.1:1/claims'],
        ]) {
          const provider = await app.inject({
            method: 'POST',
            url: '/api/attribute-providers',
            headers: admin,
            payload: { id, url, auth: { type: 'api-key', value: 'provider-api-key-123' } },
          })
          expect(provider.statusCode, provider.body).toBe(201)
          await app.inject({
            method: 'POST',
            url: '/api/credentials',
            headers: admin,
            payload: {
              id: `from-${id}`,
              config: { format: 'dc+sd-jwt', vct: `urn:example:${id}` },
              keyChainId: 'pid-keys',
              attributeProviderId: id,
              fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
            },
          })
        }
        // Claims are asked for at the credential request, with the session id.
        const issueFrom = async (configurationId: string) => {
          const created = await offer({ credentialConfigurationIds: [configurationId], claims: undefined })
          const accessToken = (await redeem(created)).json().access_token
          const response = await credentialRequest(accessToken, {
            credential_configuration_id: configurationId,
            proofs: { jwt: [(await proof({ nonce: await nonce() })).jwt] },
          })
          return { created, response }
        }
        const ok = await issueFrom('from-hr')
        expect(ok.response.statusCode, ok.response.body).toBe(200)
        expect(seen).toStrictEqual([
          {
            key: 'provider-api-key-123',
            body: { tenantId: tenant, sessionId: ok.created.sessionId, credentialConfigurationId: 'from-hr' },
          },
        ])
        const bad = await issueFrom('from-bad')
        expect(bad.response.json()).toMatchObject({
          error: 'credential_request_denied',
          error_description: expect.stringContaining('claims.given_name'),
        })
        expect(bad.response.body).not.toContain('credentials')
        const down = await issueFrom('from-down')
        expect(down.response.statusCode).toBe(400)
        expect(down.response.json()).toStrictEqual({
          error: 'credential_request_denied',
          error_description: "attribute provider 'down' could not be reached",
        })
        const session = (
          await app.inject({ url: `/api/sessions/${down.created.sessionId}`, headers: admin })
        ).json()
        expect(session).toMatchObject({
          status: 'failed',
          failureReason: "attribute provider 'down' could not be reached",
        })
        // Issue 13: the operator's log names the provider, the session and the cause.
        const line = logged().find(
          (line) => line.msg === 'attribute provider failed' && line.sessionId === down.created.sessionId,
        )
        expect(line).toMatchObject({ level: 40, tenantId: tenant, attributeProviderId: 'down' })
        expect(JSON.stringify(line?.err)).toContain('ECONNREFUSED')
      } finally {
        server.close()
      }
    })

    it('S-125: an attribute provider streaming an endless answer is cut off at OUTBOUND_MAX_RESPONSE_BYTES; the session fails with the reason, the wallet gets an OAuth error', async () => {
      let requests = 0
      const server = createHttpServer((req, res) => {
        requests++
        req.resume()
        res.writeHead(200, { 'content-type': 'application/json' })
        res.write('{"given_name":"')
        const chunk = 'x'.repeat(16 * 1024)
        const pump = () => {
          while (!res.destroyed && res.write(chunk)) {}
          if (!res.destroyed) res.once('drain', pump)
        }
        pump()
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const port = (server.address() as AddressInfo).port
      try {
        const provider = await app.inject({
          method: 'POST',
          url: '/api/attribute-providers',
          headers: admin,
          payload: { id: 'endless', url: `http://127.0.0.1:${port}/claims`, timeoutMs: 20_000 },
        })
        expect(provider.statusCode, provider.body).toBe(201)
        const config = await app.inject({
          method: 'POST',
          url: '/api/credentials',
          headers: admin,
          payload: {
            id: 'from-endless',
            config: { format: 'dc+sd-jwt', vct: 'urn:example:endless' },
            keyChainId: 'pid-keys',
            attributeProviderId: 'endless',
            fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
          },
        })
        expect(config.statusCode, config.body).toBe(201)
        const created = await offer({ credentialConfigurationIds: ['from-endless'], claims: undefined })
        const accessToken = (await redeem(created)).json().access_token
        const started = Date.now()
        const response = await credentialRequest(accessToken, {
          credential_configuration_id: 'from-endless',
          proofs: { jwt: [(await proof({ nonce: await nonce() })).jwt] },
        })
        // Far below the provider's 20 s timeout: the stream is dropped at the cap, not read to the end.
        expect(Date.now() - started).toBeLessThan(10_000)
        expect(requests).toBe(1)
        expect(response.statusCode).toBe(400)
        expect(response.headers['cache-control']).toBe('no-store')
        expect(response.json()).toStrictEqual({
          error: 'credential_request_denied',
          error_description: "attribute provider 'endless' answered more than 262144 bytes",
        })
        const session = (
          await app.inject({ url: `/api/sessions/${created.sessionId}`, headers: admin })
        ).json()
        expect(session).toMatchObject({
          status: 'failed',
          failureReason: "attribute provider 'endless' answered more than 262144 bytes",
        })
      } finally {
        server.closeAllConnections()
        server.close()
      }
    })
  })
})
