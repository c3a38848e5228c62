import { createPkcs11Provider, signJws } from '@credential-service/crypto'
import { createSoftHsmToken, type SoftHsmToken } from '@credential-service/crypto/testing'
import { testDatabases } from '@credential-service/db-schema/testing'
import { ConfigError, verifyKeyProviders } from '@credential-service/server-kit'
import { compactVerify, createLocalJWKSet } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, type TestClient } from './harness'

// Issue 40: key chains on a PKCS#11 token (SoftHSM2) through the management API.
describe.each(testDatabases())('PKCS#11 key chains on $name', (testDatabase) => {
  let token: SoftHsmToken
  let h: Harness
  let admin: TestClient
  const logLines: string[] = []
  const chains = (tenant: string) => `/api/tenants/${tenant}/key-chains`
  const hsm = () => createPkcs11Provider(token)

  beforeAll(async () => {
    token = await createSoftHsmToken()
    h = await createHarness(testDatabase, { logLines, providers: { pkcs11: hsm() } })
    admin = await h.createClient(h.tenantA, ['key:manage', 'key:read'])
  })
  afterAll(() => h?.close())

  const create = (payload: object, harness = h, auth = admin.auth) =>
    harness.app.inject({ method: 'POST', url: chains(harness.tenantA), headers: auth, payload })

  async function roundTrip(keyChainId: string) {
    const signer = await h.keys.signer(h.tenantA, keyChainId)
    const jws = await signJws(signer, { kid: signer.kid }, { sub: 'hsm' })
    const { payload } = await compactVerify(jws, createLocalJWKSet(await h.keys.jwks(h.tenantA)))
    expect(JSON.parse(new TextDecoder().decode(payload))).toStrictEqual({ sub: 'hsm' })
  }

  describe('happy', () => {
    for (const algorithm of ['ES256', 'ES384', 'EdDSA'] as const) {
      it(`generates a ${algorithm} key on the token, its leaf issued by the chain's root; signs and verifies via the JWKS`, async () => {
        const id = random('hsm')
        const response = await create({ source: 'generate', id, kmsProvider: 'pkcs11', algorithm })
        expect(response.statusCode).toBe(201)
        expect(response.json()).toMatchObject({
          kmsProvider: 'pkcs11',
          externalKeyId: expect.stringMatching(new RegExp(`^${h.tenantA}/${id}/[0-9a-f]{8}$`)),
          algorithm,
          certificateMode: 'internal-ca',
          rootCertificate: expect.stringContaining('BEGIN CERTIFICATE'),
        })
        await roundTrip(id)
      })
    }

    it('registers a key already on the token by its label; automatic rotation is for generated chains only', async () => {
      const label = random('operator-made')
      const made = await (hsm().generate as NonNullable<ReturnType<typeof hsm>['generate']>)(label, 'ES256')
      const byLabel = await create({
        source: 'external',
        id: random('ext'),
        kmsProvider: 'pkcs11',
        externalKeyId: label,
      })
      expect(byLabel.statusCode).toBe(201)
      expect(byLabel.json()).toMatchObject({
        kmsProvider: 'pkcs11',
        externalKeyId: label,
        certificateMode: 'none',
      })
      expect(byLabel.json().activeKey.publicJwk).toStrictEqual(made.publicJwk)
      await roundTrip(byLabel.json().id)

      const auto = await create({
        source: 'external',
        kmsProvider: 'pkcs11',
        externalKeyId: label,
        rotationPolicy: { enabled: true },
      })
      expect(auto.statusCode).toBe(400)
      expect(auto.json().errors[0].path).toBe('body.rotationPolicy.enabled')
      const generated = await create({
        source: 'generate',
        kmsProvider: 'pkcs11',
        rotationPolicy: { enabled: true, intervalDays: 30 },
      })
      expect(generated.statusCode).toBe(201)
      expect(generated.json().nextRotationAt).not.toBeNull()
    })
  })

  it('the rotation job rotates a due chain generated on the token, and skips it where PKCS#11 is not configured', async () => {
    const { rotateDueKeyChains } = await import('../src/services/key-chain-service')
    const id = random('auto')
    const created = (
      await create({
        source: 'generate',
        id,
        kmsProvider: 'pkcs11',
        rotationPolicy: { enabled: true, intervalDays: 10, gracePeriodDays: 1 },
      })
    ).json()
    const due = new Date(Date.parse(created.nextRotationAt) + 1000)
    const deps = { db: h.database.db, publicUrl: 'https://issuer.test', now: () => due }
    const elsewhere = await createHarness(testDatabase, {})
    try {
      expect(await rotateDueKeyChains({ ...deps, keys: elsewhere.keys }, 1000)).not.toContain(
        `${h.tenantA}/${id}`,
      )
    } finally {
      await elsewhere.close()
    }
    expect(await rotateDueKeyChains({ ...deps, keys: h.keys }, 1000)).toContain(`${h.tenantA}/${id}`)
    const after = (await h.app.inject({ url: `${chains(h.tenantA)}/${id}`, headers: admin.auth })).json()
    expect(after).toMatchObject({ kmsProvider: 'pkcs11', previousKey: { kid: created.activeKey.kid } })
    expect(after.externalKeyId).not.toBe(created.externalKeyId)
  })

  describe('error', () => {
    it('a self-signed certificate for a token key is refused, naming certificate.mode', async () => {
      const response = await create({
        source: 'generate',
        kmsProvider: 'pkcs11',
        certificate: { mode: 'self-signed' },
      })
      expect(response.statusCode).toBe(400)
      expect(response.json().errors).toStrictEqual([
        { path: 'body.certificate.mode', message: expect.any(String) },
      ])
    })

    it('an unknown label is a 400 naming externalKeyId; nothing is written', async () => {
      const id = random('missing')
      const response = await create({
        source: 'external',
        id,
        kmsProvider: 'pkcs11',
        externalKeyId: 'no-such-label',
      })
      expect(response.statusCode).toBe(400)
      expect(response.json().errors[0].path).toBe('body.externalKeyId')
      expect(response.json().detail).toContain(`key chain '${id}'`)
      expect(
        (await h.app.inject({ url: `${chains(h.tenantA)}/${id}`, headers: admin.auth })).statusCode,
      ).toBe(404)
    })

    it('a token or module this service cannot use is a 400 naming kmsProvider, at save', async () => {
      for (const options of [
        { ...token, tokenLabel: 'no-such-token' },
        { ...token, module: '/nonexistent/libvendor-pkcs11.so' },
      ]) {
        const broken = await createHarness(testDatabase, {
          providers: { pkcs11: createPkcs11Provider(options) },
        })
        try {
          const brokenAdmin = await broken.createClient(broken.tenantA, ['key:manage'])
          const response = await create(
            { source: 'generate', kmsProvider: 'pkcs11' },
            broken,
            brokenAdmin.auth,
          )
          expect(response.statusCode).toBe(400)
          expect(response.json().errors[0].path).toBe('body.kmsProvider')
        } finally {
          await broken.close()
        }
      }
    })

    it('at start: a missing token stops the process naming the variables; a pkcs11 key chain whose key is not on the token is a warning naming the chain', async () => {
      const id = random('start')
      expect((await create({ source: 'generate', id, kmsProvider: 'pkcs11' })).statusCode).toBe(201)
      const absent = await verifyKeyProviders(h.database.db, {
        pkcs11: createPkcs11Provider({ ...token, tokenLabel: 'unplugged' }),
      }).catch((error) => error)
      expect(absent).toBeInstanceOf(ConfigError)
      expect(absent.issues).toStrictEqual([
        `PKCS11_MODULE / PKCS11_TOKEN_LABEL / PKCS11_PIN: PKCS#11 token 'unplugged' is not present in module '${token.module}'`,
      ])
      // The database is shared with other files: their chains live on tokens of their own.
      const onOtherToken = await verifyKeyProviders(h.database.db, {
        pkcs11: createPkcs11Provider(await createSoftHsmToken()),
      })
      expect(onOtherToken.find((line) => line.startsWith(`key chain '${h.tenantA}/${id}'`))).toMatch(
        /: not found$/,
      )
    })
  })

  describe('security', () => {
    it('no private key material or PIN in answers or logs', async () => {
      const id = random('quiet')
      const response = await create({ source: 'generate', id, kmsProvider: 'pkcs11' })
      const listed = await h.app.inject({ url: `${chains(h.tenantA)}/${id}`, headers: admin.auth })
      for (const body of [response.json(), listed.json()]) {
        expect(body.activeKey.publicJwk).not.toHaveProperty('d')
        expect(JSON.stringify(body)).not.toContain('"d":')
      }
      expect(logLines.join('\n')).not.toContain(token.pin)
    })

    it("tenant B cannot read or rotate tenant A's token key chain (404)", async () => {
      const id = random('own')
      await create({ source: 'generate', id, kmsProvider: 'pkcs11' })
      const other = await h.createClient(h.tenantB, ['key:manage'])
      for (const request of [
        { url: `${chains(h.tenantB)}/${id}` },
        { method: 'POST' as const, url: `${chains(h.tenantB)}/${id}/rotate`, payload: {} },
      ]) {
        expect((await h.app.inject({ ...request, headers: other.auth })).statusCode).toBe(404)
      }
    })
  })
})
