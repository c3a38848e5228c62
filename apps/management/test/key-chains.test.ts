import { X509Certificate } from 'node:crypto'
import { certificateFacts, generateKeyPair, signJws } from '@credential-service/crypto'
import { issueTestCertificate, startFakeKms, startFakeVault } from '@credential-service/crypto/testing'
import { testDatabases } from '@credential-service/db-schema/testing'
import { compactVerify, createLocalJWKSet, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, type TestClient } from './harness'

const DAY = 86_400_000

describe.each(testDatabases())('key chains on $name', (testDatabase) => {
  let h: Harness
  let vault: Awaited<ReturnType<typeof startFakeVault>>
  let kms: Awaited<ReturnType<typeof startFakeKms>>
  let clock = Date.now()
  let admin: TestClient
  const logLines: string[] = []
  const chains = (tenant: string) => `/api/tenants/${tenant}/key-chains`

  beforeAll(async () => {
    vault = await startFakeVault('vault-token')
    kms = await startFakeKms()
    const { createVaultProvider, createAwsKmsProvider } = await import('@credential-service/crypto')
    h = await createHarness(testDatabase, {
      now: () => new Date(clock),
      logLines,
      providers: {
        vault: createVaultProvider({ address: vault.address, token: 'vault-token' }),
        'aws-kms': createAwsKmsProvider({
          region: 'eu-west-1',
          endpoint: kms.endpoint,
          credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret-example-key' },
        }),
      },
    })
    admin = await h.createClient(h.tenantA, ['key:manage'])
  })
  afterAll(async () => {
    await h.close()
    await vault.close()
    await kms.close()
  })

  /** Moves the app's clock; management tokens minted before are re-minted, as a client would. */
  async function travel(ms: number) {
    clock += ms
    admin = { ...admin, ...(await reauth(admin)) }
  }
  async function reauth(client: TestClient) {
    const token = await h.tokenFor(client.clientId, client.clientSecret)
    return { token, auth: { authorization: `Bearer ${token}` } }
  }

  const create = (payload: unknown, tenant = h.tenantA) =>
    h.app.inject({ method: 'POST', url: chains(tenant), headers: admin.auth, payload: payload as object })

  /** Signs with the key chain's Signer and verifies against the tenant's published JWKS. */
  async function roundTrip(tenant: string, keyChainId: string) {
    const signer = await h.keys.signer(tenant, keyChainId)
    const jws = await signJws(signer, { kid: signer.kid, typ: 'JWT' }, { sub: 'round-trip' })
    const { payload } = await compactVerify(jws, createLocalJWKSet(await h.keys.jwks(tenant)))
    expect(JSON.parse(new TextDecoder().decode(payload))).toStrictEqual({ sub: 'round-trip' })
    return jws
  }

  describe('happy', () => {
    for (const algorithm of ['ES256', 'ES384', 'EdDSA'] as const) {
      it(`F-02 / HAIP §6.1.1: generates a ${algorithm} db key whose leaf, by default, is issued by the chain’s own root (x5c = [leaf]); signs and verifies via the JWKS`, async () => {
        const id = random('gen')
        const response = await create({ source: 'generate', id, algorithm })
        expect(response.statusCode).toBe(201)
        const chain = response.json()
        expect(chain).toMatchObject({
          id,
          kmsProvider: 'db',
          externalKeyId: null,
          algorithm,
          certificateMode: 'internal-ca',
          previousKey: null,
        })
        expect(chain.activeKey.certificateChain).toHaveLength(1)
        const certificate = new X509Certificate(chain.activeKey.certificateChain[0])
        expect(certificate.subject).toBe(`CN=${h.tenantA} ${id}`)
        expect(certificate.subjectAltName).toBe(
          `DNS:issuer.test, URI:https://issuer.test/issuers/${h.tenantA}`,
        )
        // Not self-signed: issued by a separate root, a CA that may sign leaves only (RFC 5280 §4.2.1.9).
        const root = new X509Certificate(chain.rootCertificate)
        expect(certificate.issuer).not.toBe(certificate.subject)
        expect(certificate.verify(certificate.publicKey)).toBe(false)
        expect(root.subject).toBe(`CN=${h.tenantA} ${id} Root CA`)
        expect(certificate.checkIssued(root) && certificate.verify(root.publicKey)).toBe(true)
        expect(root.ca).toBe(true)
        const facts = await certificateFacts({ raw: root.raw })
        expect(facts).toMatchObject({ ca: true, pathLength: 0, keyUsage: { keyCertSign: true } })
        const signer = await h.keys.signer(h.tenantA, id)
        expect(signer.x5c).toHaveLength(1)
        const jws = await roundTrip(h.tenantA, id)
        expect(decodeProtectedHeader(jws).alg).toBe(algorithm)
      })
    }

    it('certificate mode self-signed, asked for explicitly (development): one self-signed certificate, no root', async () => {
      const id = random('self')
      const response = await create({ source: 'generate', id, certificate: { mode: 'self-signed' } })
      expect(response.statusCode, response.body).toBe(201)
      const chain = response.json()
      expect(chain).toMatchObject({ certificateMode: 'self-signed', rootCertificate: null })
      expect(chain.activeKey.certificateChain).toHaveLength(1)
      const certificate = new X509Certificate(chain.activeKey.certificateChain[0])
      expect(certificate.issuer).toBe(certificate.subject)
      expect(certificate.verify(certificate.publicKey)).toBe(true)
      await roundTrip(h.tenantA, id)
    })

    it('an internal CA: the leaf is issued by the chain’s root, and x5c leaves the root out (HAIP)', async () => {
      const id = random('ca')
      const chain = (
        await create({
          source: 'generate',
          id,
          certificate: { mode: 'internal-ca', subject: 'CN=ACME PID Issuer' },
        })
      ).json()
      expect(chain.certificateMode).toBe('internal-ca')
      const root = new X509Certificate(chain.rootCertificate)
      const leaf = new X509Certificate(chain.activeKey.certificateChain[0])
      expect(root.ca).toBe(true)
      expect(leaf.checkIssued(root)).toBe(true)
      expect(leaf.verify(root.publicKey)).toBe(true)
      const signer = await h.keys.signer(h.tenantA, id)
      expect(signer.x5c).toHaveLength(1)

      // A rotated leaf is issued by the same root.
      const rotated = (
        await h.app.inject({ method: 'POST', url: `${chains(h.tenantA)}/${id}/rotate`, headers: admin.auth })
      ).json()
      expect(new X509Certificate(rotated.activeKey.certificateChain[0]).verify(root.publicKey)).toBe(true)
    })

    it('S-131 / SD-JWT VC §3.5: every leaf the service makes names the tenant’s issuer identifier (SAN URI) and its host (SAN dNSName); rotation keeps both', async () => {
      const san = (chain: { activeKey: { certificateChain: string[] } }) =>
        new X509Certificate(chain.activeKey.certificateChain[0] as string).subjectAltName
      const issuerId = `https://issuer.test/issuers/${h.tenantA}`
      const made = [
        { source: 'generate', id: random('san') },
        { source: 'generate', id: random('san'), certificate: { mode: 'internal-ca' } },
        { source: 'import', id: random('san'), privateKey: (await generateKeyPair('ES256')).privateJwk },
      ]
      for (const payload of made) {
        const created = await create(payload)
        expect(created.statusCode, created.body).toBe(201)
        expect(san(created.json()), payload.source).toBe(`DNS:issuer.test, URI:${issuerId}`)
        const rotated = await h.app.inject({
          method: 'POST',
          url: `${chains(h.tenantA)}/${payload.id}/rotate`,
          headers: admin.auth,
        })
        expect(rotated.json().activeKey.kid).not.toBe(created.json().activeKey.kid)
        expect(san(rotated.json())).toBe(`DNS:issuer.test, URI:${issuerId}`)
      }
      // dnsNames of the request replace the default dNSName; the URI stays.
      const own = await create({ source: 'generate', certificate: { dnsNames: ['pid.example'] } })
      expect(san(own.json())).toBe(`DNS:pid.example, URI:${issuerId}`)
    })

    it('ISO 18013-5 Annex B.1.4: generated leaves are Document Signer certificates; `country` puts C= in the subject and the root’s', async () => {
      const id = random('ds')
      const chain = (
        await create({
          source: 'generate',
          id,
          certificate: { mode: 'internal-ca', subject: 'CN=ACME mDL Issuer', country: 'DE' },
        })
      ).json()
      const root = new X509Certificate(chain.rootCertificate)
      const leaf = new X509Certificate(chain.activeKey.certificateChain[0])
      expect(leaf.subject).toBe('CN=ACME mDL Issuer\nC=DE')
      expect(leaf.issuer).toBe('CN=ACME mDL Issuer Root CA\nC=DE')
      expect(root.subject).toBe(leaf.issuer)
      // node lists the extended key usages: id-mdl-kp-mdlDS only.
      expect(leaf.keyUsage).toStrictEqual(['1.0.18013.5.1.2'])
      expect(leaf.validFrom).toBeTruthy()
      // Rotation keeps the profile and the country.
      const rotated = (
        await h.app.inject({ method: 'POST', url: `${chains(h.tenantA)}/${id}/rotate`, headers: admin.auth })
      ).json()
      const next = new X509Certificate(rotated.activeKey.certificateChain[0])
      expect(next.subject).toBe('CN=ACME mDL Issuer\nC=DE')
      expect(next.keyUsage).toStrictEqual(['1.0.18013.5.1.2'])
      // A subject that names its country keeps it; a bad country code is a 400 naming the field.
      const own = (
        await create({ source: 'generate', certificate: { subject: 'CN=X,C=AT', country: 'DE' } })
      ).json()
      expect(new X509Certificate(own.activeKey.certificateChain[0]).subject).toBe('CN=X\nC=AT')
      const bad = await create({ source: 'generate', certificate: { country: 'Germany' } })
      expect(bad.statusCode).toBe(400)
      expect(JSON.stringify(bad.json().errors)).toContain('certificate.country')
    })

    it('imports a PEM private key and a private JWK; the private part is never returned', async () => {
      const pair = await generateKeyPair('ES256')
      const { createPrivateKey } = await import('node:crypto')
      const pem = createPrivateKey({ key: pair.privateJwk as never, format: 'jwk' })
        .export({ format: 'pem', type: 'pkcs8' })
        .toString()
      for (const privateKey of [pem, pair.privateJwk]) {
        const id = random('imp')
        const response = await create({ source: 'import', id, privateKey })
        expect(response.statusCode).toBe(201)
        expect(response.json().activeKey.kid).toBe(pair.kid)
        expect(response.body).not.toContain(pair.privateJwk.d)
        await roundTrip(h.tenantA, id)
      }
    })

    it('refuses with 400 on body.privateKey a private JWK whose d belongs to another key than its x and y', async () => {
      const [pair, other] = [await generateKeyPair('ES256'), await generateKeyPair('ES256')]
      const response = await create({
        source: 'import',
        privateKey: { ...pair.privateJwk, d: other.privateJwk.d },
      })
      expect(response.statusCode).toBe(400)
      expect(response.json().errors).toStrictEqual([
        {
          path: 'body.privateKey',
          message: 'the private key does not match the public key given with it (x, y)',
        },
      ])
    })

    it('S-131: imports a key with its certificate chain (mode provided), also one whose leaf does not name the issuer (it may serve a verifier)', async () => {
      const pair = await generateKeyPair('ES256')
      const { createCertificate } = await import('@credential-service/crypto')
      const pem = await createCertificate({
        subjectPublicJwk: pair.publicJwk,
        issuerPrivateJwk: pair.privateJwk,
        subject: 'CN=Given',
        validityDays: 30,
        // The app's clock, set when this block was collected: after a slow first block it lags
        // real time by more than the minute a certificate is backdated.
        now: new Date(clock),
      })
      const chain = (
        await create({ source: 'import', privateKey: pair.privateJwk, certificateChain: [pem] })
      ).json()
      expect(chain.certificateMode).toBe('provided')
      expect(new X509Certificate(chain.activeKey.certificateChain[0]).subject).toBe('CN=Given')
      expect(new X509Certificate(chain.activeKey.certificateChain[0]).subjectAltName).toBeUndefined()
    })

    it('registers a Vault transit key by externalKeyId; signatures verify with the published JWK', async () => {
      const firstCall = vault.requests.length
      const id = random('vault')
      const keyName = `pid-${id}`
      const key = await vault.addKey(keyName)
      const response = await create({ source: 'external', id, kmsProvider: 'vault', externalKeyId: keyName })
      expect(response.statusCode).toBe(201)
      expect(response.json()).toMatchObject({
        kmsProvider: 'vault',
        externalKeyId: keyName,
        algorithm: 'ES256',
        certificateMode: 'none',
      })
      expect(response.json().activeKey.publicJwk).toStrictEqual(key.publicJwk)
      await roundTrip(h.tenantA, id)
      expect(vault.requests.slice(firstCall).some((r) => r.url === `/v1/transit/sign/${keyName}`)).toBe(true)
    })

    it('registers an AWS KMS key by ARN; signatures verify with the published JWK', async () => {
      const arn = `arn:aws:kms:eu-west-1:111122223333:key/${crypto.randomUUID()}`
      const key = await kms.addKey(arn, 'ES384')
      const id = random('kms')
      const response = await create({ source: 'external', id, kmsProvider: 'aws-kms', externalKeyId: arn })
      expect(response.statusCode).toBe(201)
      expect(response.json()).toMatchObject({
        kmsProvider: 'aws-kms',
        externalKeyId: arn,
        algorithm: 'ES384',
      })
      expect(response.json().activeKey.publicJwk).toStrictEqual(key.publicJwk)
      await roundTrip(h.tenantA, id)
    })

    it('lists, updates and deletes; a deleted chain leaves the JWKS', async () => {
      const id = random('life')
      const created = (await create({ source: 'generate', id })).json()
      const list = await h.app.inject({ url: `${chains(h.tenantA)}?limit=100`, headers: admin.auth })
      expect(list.json().items.map((c: { id: string }) => c.id)).toContain(id)
      const patched = await h.app.inject({
        method: 'PATCH',
        url: `${chains(h.tenantA)}/${id}`,
        headers: admin.auth,
        payload: {
          description: 'PID signing',
          rotationPolicy: { enabled: true, intervalDays: 30, gracePeriodDays: 7 },
        },
      })
      expect(patched.json()).toMatchObject({
        description: 'PID signing',
        rotationPolicy: { enabled: true, intervalDays: 30, gracePeriodDays: 7 },
      })
      expect(Date.parse(patched.json().nextRotationAt) - Date.parse(created.createdAt)).toBe(30 * DAY)
      expect(
        (await h.app.inject({ method: 'DELETE', url: `${chains(h.tenantA)}/${id}`, headers: admin.auth }))
          .statusCode,
      ).toBe(204)
      const kids = (await h.keys.jwks(h.tenantA)).keys.map((k) => k.kid)
      expect(kids).not.toContain(created.activeKey.kid)
    })

    it('a tenant client with key:manage uses the /api/key-chains shorthand', async () => {
      const keyAdmin = await h.createClient(h.tenantB, ['key:manage'])
      const response = await h.app.inject({
        method: 'POST',
        url: '/api/key-chains',
        headers: keyAdmin.auth,
        payload: { source: 'generate' },
      })
      expect(response.statusCode).toBe(201)
      expect(response.json().id).toMatch(/^kc_/)
      // An operator acts on tenants by naming them; on the shorthand it has no tenant.
      const operator = await h.createClient(null, ['tenant:manage', 'key:manage'])
      const shorthand = await h.app.inject({
        method: 'POST',
        url: '/api/key-chains',
        headers: operator.auth,
        payload: { source: 'generate' },
      })
      expect(shorthand.statusCode).toBe(400)
      const named = await h.app.inject({
        method: 'POST',
        url: chains(h.tenantB),
        headers: operator.auth,
        payload: { source: 'generate' },
      })
      expect(named.statusCode).toBe(201)
    })
  })

  describe('rotation', () => {
    it('rotate now: old signatures verify through the grace period; the old key is dropped after it', async () => {
      const id = random('rot')
      const before = (
        await create({
          source: 'generate',
          id,
          rotationPolicy: { enabled: false, intervalDays: 90, gracePeriodDays: 2 },
        })
      ).json()
      const oldJws = await roundTrip(h.tenantA, id)
      const rotated = (
        await h.app.inject({ method: 'POST', url: `${chains(h.tenantA)}/${id}/rotate`, headers: admin.auth })
      ).json()
      expect(rotated.activeKey.kid).not.toBe(before.activeKey.kid)
      expect(rotated.previousKey).toMatchObject({ kid: before.activeKey.kid })
      expect(Date.parse(rotated.previousKey.expiresAt) - clock).toBe(2 * DAY)
      // New signatures use the new key; the old one still verifies against the JWKS.
      const newJws = await roundTrip(h.tenantA, id)
      expect(decodeProtectedHeader(newJws).kid).toBe(rotated.activeKey.kid)
      await compactVerify(oldJws, createLocalJWKSet(await h.keys.jwks(h.tenantA)))

      await travel(2 * DAY + 1000)
      const kids = (await h.keys.jwks(h.tenantA)).keys.map((k) => k.kid)
      expect(kids).toContain(rotated.activeKey.kid)
      expect(kids).not.toContain(before.activeKey.kid)
      await expect(compactVerify(oldJws, createLocalJWKSet(await h.keys.jwks(h.tenantA)))).rejects.toThrow()
      expect(
        (await h.app.inject({ url: `${chains(h.tenantA)}/${id}`, headers: admin.auth })).json().previousKey,
      ).toBeNull()
    })

    it('policy: the rotation job rotates a due chain once, and not before it is due', async () => {
      const { rotateDueKeyChains } = await import('../src/services/key-chain-service')
      const id = random('auto')
      const created = (
        await create({
          source: 'generate',
          id,
          rotationPolicy: { enabled: true, intervalDays: 10, gracePeriodDays: 1 },
        })
      ).json()
      const deps = {
        db: h.database.db,
        keys: h.keys,
        publicUrl: 'https://issuer.test',
        now: () => new Date(clock),
      }
      expect(await rotateDueKeyChains(deps, 1000)).not.toContain(`${h.tenantA}/${id}`)
      await travel(10 * DAY + 1000)
      expect(await rotateDueKeyChains(deps, 1000)).toContain(`${h.tenantA}/${id}`)
      expect(await rotateDueKeyChains(deps, 1000)).not.toContain(`${h.tenantA}/${id}`)
      const after = (await h.app.inject({ url: `${chains(h.tenantA)}/${id}`, headers: admin.auth })).json()
      expect(after.previousKey.kid).toBe(created.activeKey.kid)
      expect(Date.parse(after.nextRotationAt) - clock).toBe(10 * DAY)
    })

    it.runIf(testDatabase.name === 'postgres')(
      'two pods running the rotation job at once rotate each due chain exactly once',
      async () => {
        const { rotateDueKeyChains } = await import('../src/services/key-chain-service')
        const ids = [random('pod'), random('pod'), random('pod')]
        const originals = new Map<string, string>()
        for (const id of ids) {
          const created = (
            await create({
              source: 'generate',
              id,
              rotationPolicy: { enabled: true, intervalDays: 1, gracePeriodDays: 1 },
            })
          ).json()
          originals.set(id, created.activeKey.kid)
        }
        await travel(DAY + 1000)
        const secondPod = await testDatabase.open()
        try {
          const deps = (db: typeof h.database.db) => ({
            db,
            keys: h.keys,
            publicUrl: 'https://issuer.test',
            now: () => new Date(clock),
          })
          const [one, two] = await Promise.all([
            rotateDueKeyChains(deps(h.database.db), 1000),
            rotateDueKeyChains(deps(secondPod.db), 1000),
          ])
          for (const id of ids) {
            const key = `${h.tenantA}/${id}`
            expect([one?.includes(key), two?.includes(key)].filter(Boolean), id).toHaveLength(1)
            const after = (
              await h.app.inject({ url: `${chains(h.tenantA)}/${id}`, headers: admin.auth })
            ).json()
            expect(after.previousKey.kid).toBe(originals.get(id))
          }
        } finally {
          await secondPod.close()
        }
      },
    )

    it('two concurrent rotations leave one consistent chain', async () => {
      const id = random('race')
      const original = (await create({ source: 'generate', id })).json()
      const [a, b] = await Promise.all(
        [1, 2].map(() =>
          h.app.inject({ method: 'POST', url: `${chains(h.tenantA)}/${id}/rotate`, headers: admin.auth }),
        ),
      )
      expect([a?.statusCode, b?.statusCode]).toStrictEqual([200, 200])
      const final = (await h.app.inject({ url: `${chains(h.tenantA)}/${id}`, headers: admin.auth })).json()
      const produced = new Set([a?.json().activeKey.kid, b?.json().activeKey.kid])
      expect(produced.size).toBe(2)
      expect(produced).toStrictEqual(new Set([final.activeKey.kid, final.previousKey.kid]))
      expect([final.activeKey.kid, final.previousKey.kid]).not.toContain(original.activeKey.kid)
      await roundTrip(h.tenantA, id)
    })

    it('an external chain rotates to a new externalKeyId; the same key again is a conflict', async () => {
      const first = `k1-${random('v')}`
      const second = `k2-${random('v')}`
      await vault.addKey(first)
      await vault.addKey(second)
      const id = random('vrot')
      await create({ source: 'external', id, kmsProvider: 'vault', externalKeyId: first })
      const same = await h.app.inject({
        method: 'POST',
        url: `${chains(h.tenantA)}/${id}/rotate`,
        headers: admin.auth,
        payload: {},
      })
      expect(same.statusCode).toBe(409)
      const rotated = await h.app.inject({
        method: 'POST',
        url: `${chains(h.tenantA)}/${id}/rotate`,
        headers: admin.auth,
        payload: { externalKeyId: second },
      })
      expect(rotated.statusCode).toBe(200)
      expect(rotated.json().externalKeyId).toBe(second)
      expect(rotated.json().previousKey).not.toBeNull()
      await roundTrip(h.tenantA, id)
    })
  })

  describe('error', () => {
    it('spec §7: an external key chain without externalKeyId is refused by the API, naming the field', async () => {
      const response = await create({ source: 'external', kmsProvider: 'vault' })
      expect(response.statusCode).toBe(400)
      expect(response.json().errors).toStrictEqual([
        { path: 'body.externalKeyId', message: expect.any(String) },
      ])
    })

    it('a wrong externalKeyId is a 400 naming the key chain; nothing is written', async () => {
      const id = random('missing')
      const response = await create({
        source: 'external',
        id,
        kmsProvider: 'vault',
        externalKeyId: 'no-such-key',
      })
      expect(response.statusCode).toBe(400)
      expect(response.json().detail).toContain(`key chain '${id}'`)
      expect(response.json().errors[0].path).toBe('body.externalKeyId')
      expect(
        (await h.app.inject({ url: `${chains(h.tenantA)}/${id}`, headers: admin.auth })).statusCode,
      ).toBe(404)
      const kms404 = await create({
        source: 'external',
        id,
        kmsProvider: 'aws-kms',
        externalKeyId: 'alias/none',
      })
      expect(kms404.statusCode).toBe(400)
    })

    it('an unreachable provider is a 502 naming the key chain; nothing is written', async () => {
      const { createVaultProvider } = await import('@credential-service/crypto')
      const down = await createHarness(testDatabase, {
        providers: { vault: createVaultProvider({ address: 'http://127.0.0.1:1', token: 't' }) },
      })
      try {
        const id = random('down')
        const downAdmin = await down.createClient(down.tenantA, ['key:manage'])
        const response = await down.app.inject({
          method: 'POST',
          url: chains(down.tenantA),
          headers: downAdmin.auth,
          payload: { source: 'external', id, kmsProvider: 'vault', externalKeyId: 'k' },
        })
        expect(response.statusCode).toBe(502)
        expect(response.json()).toMatchObject({
          code: 'upstream_failure',
          detail: expect.stringContaining(`key chain '${id}'`),
        })
        expect(
          (await down.app.inject({ url: `${chains(down.tenantA)}/${id}`, headers: downAdmin.auth }))
            .statusCode,
        ).toBe(404)
      } finally {
        await down.close()
      }
    })

    it('refuses a certificate chain that does not certify the key, and automatic rotation of an external key', async () => {
      const other = await generateKeyPair('ES256')
      const { createCertificate } = await import('@credential-service/crypto')
      const pem = await createCertificate({
        subjectPublicJwk: other.publicJwk,
        issuerPrivateJwk: other.privateJwk,
        subject: 'CN=Other',
        validityDays: 1,
      })
      const pair = await generateKeyPair('ES256')
      const wrong = await create({ source: 'import', privateKey: pair.privateJwk, certificateChain: [pem] })
      expect(wrong.statusCode).toBe(400)
      expect(wrong.json().errors[0].path).toBe('body.certificateChain')
      const keyName = `auto-${random('v')}`
      await vault.addKey(keyName)
      const auto = await create({
        source: 'external',
        kmsProvider: 'vault',
        externalKeyId: keyName,
        rotationPolicy: { enabled: true },
      })
      expect(auto.statusCode).toBe(400)
      expect(auto.json().errors[0].path).toBe('body.rotationPolicy.enabled')
    })

    it('RFC 5280 §6.1, S-127: an imported chain whose issuer is an end-entity certificate is refused (400)', async () => {
      const root = await issueTestCertificate({ subject: 'CN=Root', ca: true })
      const ordinary = await issueTestCertificate({ subject: 'CN=Ordinary', issuer: root })
      const leaf = await issueTestCertificate({ subject: 'CN=Leaf', issuer: ordinary })
      const refused = await create({
        source: 'import',
        privateKey: leaf.keys.privateJwk,
        certificateChain: [leaf.pem, ordinary.pem, root.pem],
      })
      expect(refused.statusCode).toBe(400)
      expect(refused.json().errors).toStrictEqual([
        { path: 'body.certificateChain', message: 'chain certificate 1 is not a CA (basicConstraints cA)' },
      ])
    })

    it('a taken id is 409; removed 3.x fields (keyId, certId) are refused by name', async () => {
      const id = random('dup')
      await create({ source: 'generate', id })
      expect((await create({ source: 'generate', id })).statusCode).toBe(409)
      const legacy = await create({ source: 'generate', keyId: 'k', certId: 'c' })
      expect(legacy.statusCode).toBe(400)
      expect(legacy.json().errors.map((e: { path: string }) => e.path)).toEqual(
        expect.arrayContaining(['body.keyId', 'body.certId']),
      )
    })
  })

  describe('security', () => {
    it('private material never appears in responses or log lines', async () => {
      const pair = await generateKeyPair('ES256')
      const id = random('secret')
      const created = await create({ source: 'import', id, privateKey: pair.privateJwk })
      const got = await h.app.inject({ url: `${chains(h.tenantA)}/${id}`, headers: admin.auth })
      const rotated = await h.app.inject({
        method: 'POST',
        url: `${chains(h.tenantA)}/${id}/rotate`,
        headers: admin.auth,
      })
      for (const body of [
        created.body,
        got.body,
        rotated.body,
        JSON.stringify(await h.keys.jwks(h.tenantA)),
      ]) {
        expect(body).not.toContain(pair.privateJwk.d)
        expect(body).not.toMatch(/"d":/)
        expect(body).not.toContain('v1.') // encrypted columns stay in the database
      }
      expect(logLines.length).toBeGreaterThan(0)
      expect(logLines.join('\n')).not.toContain(pair.privateJwk.d)
    })

    it('another tenant’s key chain is 404 for every operation and cannot be used to sign', async () => {
      const id = random('mine')
      await create({ source: 'generate', id })
      const intruder = await h.createClient(h.tenantB, ['key:manage'])
      for (const attempt of [
        { method: 'GET', url: `/api/key-chains/${id}` },
        { method: 'PATCH', url: `/api/key-chains/${id}`, payload: { description: 'x' } },
        { method: 'POST', url: `/api/key-chains/${id}/rotate`, payload: {} },
        { method: 'DELETE', url: `/api/key-chains/${id}` },
        { method: 'GET', url: `${chains(h.tenantA)}/${id}` },
      ] as const) {
        const response = await h.app.inject({ ...attempt, headers: intruder.auth })
        expect(response.statusCode, `${attempt.method} ${attempt.url}`).toBe(404)
      }
      await expect(h.keys.signer(h.tenantB, id)).rejects.toThrow(/not found/)
      await roundTrip(h.tenantA, id)
    })
  })
})
