import { generateKeyPairSync } from 'node:crypto'
import { createGcpKmsProvider, jwkContext, signJws } from '@credential-service/crypto'
import { startFakeGcpKms } from '@credential-service/crypto/testing'
import { createKeyChainRepository } from '@credential-service/db-schema'
import { testDatabases } from '@credential-service/db-schema/testing'
import { compactVerify, createLocalJWKSet } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, type TestClient } from './harness'

const RING = 'projects/acme/locations/europe-west3/keyRings/issuer'
const versionOf = (key: string, n: number) => `${RING}/cryptoKeys/${key}/cryptoKeyVersions/${n}`

// Issue 40: key chains on Google Cloud KMS key versions, through a local implementation of its REST API.
describe.each(testDatabases())('Cloud KMS key chains on $name', (testDatabase) => {
  let gcp: Awaited<ReturnType<typeof startFakeGcpKms>>
  let h: Harness
  let admin: TestClient
  const logLines: string[] = []
  const chains = (tenant: string) => `/api/tenants/${tenant}/key-chains`

  beforeAll(async () => {
    gcp = await startFakeGcpKms()
    h = await createHarness(testDatabase, {
      logLines,
      providers: {
        'gcp-kms': createGcpKmsProvider({
          serviceAccount: gcp.serviceAccount,
          endpoint: gcp.endpoint,
          keyRing: RING,
        }),
      },
    })
    admin = await h.createClient(h.tenantA, ['key:manage'])
  })
  afterAll(async () => {
    await h?.close()
    await gcp?.close()
  })

  const create = (payload: object) =>
    h.app.inject({ method: 'POST', url: chains(h.tenantA), headers: admin.auth, payload })

  async function roundTrip(keyChainId: string) {
    const signer = await h.keys.signer(h.tenantA, keyChainId)
    const jws = await signJws(signer, { kid: signer.kid }, { sub: 'gcp' })
    const { payload } = await compactVerify(jws, createLocalJWKSet(await h.keys.jwks(h.tenantA)))
    expect(JSON.parse(new TextDecoder().decode(payload))).toStrictEqual({ sub: 'gcp' })
  }

  describe('happy', () => {
    it('registers a key version, signs and verifies via the JWKS; rotates to the next version, the old one published', async () => {
      const key = random('pid')
      const first = await gcp.addKey(versionOf(key, 1), 'ES384')
      const id = random('gcp')
      const response = await create({
        source: 'external',
        id,
        kmsProvider: 'gcp-kms',
        externalKeyId: versionOf(key, 1),
      })
      expect(response.statusCode).toBe(201)
      expect(response.json()).toMatchObject({
        kmsProvider: 'gcp-kms',
        externalKeyId: versionOf(key, 1),
        algorithm: 'ES384',
      })
      expect(response.json().activeKey.publicJwk).toStrictEqual(first.publicJwk)
      await roundTrip(id)
      await gcp.addKey(versionOf(key, 2), 'ES384')
      const rotated = await h.app.inject({
        method: 'POST',
        url: `${chains(h.tenantA)}/${id}/rotate`,
        headers: admin.auth,
        payload: { externalKeyId: versionOf(key, 2) },
      })
      expect(rotated.statusCode).toBe(200)
      expect(rotated.json()).toMatchObject({
        externalKeyId: versionOf(key, 2),
        previousKey: { kid: response.json().activeKey.kid },
      })
      await roundTrip(id)
    })
  })

  // Issue 40: "import where it allows". Cloud KMS takes a private key through an import job; the
  // service keeps the public part and signs there.
  describe('import', () => {
    const privateJwk = (namedCurve: string) =>
      generateKeyPairSync('ec', { namedCurve }).privateKey.export({ format: 'jwk' })

    it('source import with kmsProvider gcp-kms imports a P-256 key into the key ring; Cloud KMS signs, verified with the known public key', async () => {
      const jwk = privateJwk('P-256')
      const id = random('imported')
      const signsBefore = gcp.requests.filter((r) => r.path.endsWith(':asymmetricSign')).length
      const response = await create({ source: 'import', id, kmsProvider: 'gcp-kms', privateKey: jwk })
      expect(response.statusCode, response.body).toBe(201)
      const body = response.json()
      expect(body).toMatchObject({
        kmsProvider: 'gcp-kms',
        externalKeyId: expect.stringMatching(
          new RegExp(`^${RING}/cryptoKeys/[a-zA-Z0-9_-]+/cryptoKeyVersions/1$`),
        ),
        algorithm: 'ES256',
        certificateMode: 'self-signed',
      })
      const known = { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y }
      expect(body.activeKey.publicJwk).toStrictEqual(known)
      expect(gcp.created.at(-1)).toMatchObject({ importOnly: true, protectionLevel: 'HSM' })
      // Signed by Cloud KMS, verified with the public key known before the import.
      const signer = await h.keys.signer(h.tenantA, id)
      const jws = await signJws(signer, { kid: signer.kid }, { sub: 'imported' })
      const { payload } = await compactVerify(
        jws,
        createLocalJWKSet({ keys: [{ ...known, kid: signer.kid }] }),
      )
      expect(JSON.parse(new TextDecoder().decode(payload))).toStrictEqual({ sub: 'imported' })
      expect(gcp.requests.filter((r) => r.path.endsWith(':asymmetricSign')).length).toBeGreaterThan(
        signsBefore,
      )
      // The database holds the public part only; d reaches neither the answer nor the logs.
      const row = await createKeyChainRepository(h.database.db, h.tenantA).get(id)
      expect(h.keys.cipher.decrypt(row?.activeJwk as string, jwkContext(h.tenantA, id))).toStrictEqual(known)
      expect(response.body).not.toContain(jwk.d as string)
      expect(logLines.join('\n')).not.toContain(jwk.d as string)
    })

    it('refusals: an Ed25519 key is a 400 naming privateKey, no GCP_KMS_KEY_RING a 400 naming kmsProvider that says so; nothing is written', async () => {
      const id = random('refused')
      const ed = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' })
      const edResponse = await create({ source: 'import', id, kmsProvider: 'gcp-kms', privateKey: ed })
      expect(edResponse.statusCode).toBe(400)
      expect(edResponse.json().errors[0].path).toBe('body.privateKey')

      const other = await createHarness(testDatabase, {
        providers: {
          'gcp-kms': createGcpKmsProvider({ serviceAccount: gcp.serviceAccount, endpoint: gcp.endpoint }),
        },
      })
      try {
        const client = await other.createClient(other.tenantA, ['key:manage'])
        const jwk = privateJwk('P-384')
        const response = await other.app.inject({
          method: 'POST',
          url: chains(other.tenantA),
          headers: client.auth,
          payload: { source: 'import', id, kmsProvider: 'gcp-kms', privateKey: jwk },
        })
        expect(response.statusCode).toBe(400)
        expect(response.json().errors[0]).toMatchObject({
          path: 'body.kmsProvider',
          message: expect.stringContaining('set GCP_KMS_KEY_RING to import keys'),
        })
        expect(response.body).not.toContain(jwk.d as string)
        for (const harness of [h, other]) {
          const tenant = harness === h ? h.tenantA : other.tenantA
          const auth = harness === h ? admin.auth : client.auth
          const got = await harness.app.inject({ url: `${chains(tenant)}/${id}`, headers: auth })
          expect(got.statusCode).toBe(404)
        }
      } finally {
        await other.close()
      }
    })
  })

  describe('error', () => {
    it('an unknown version, or not a version name, is a 400 naming externalKeyId', async () => {
      for (const externalKeyId of [versionOf('absent', 1), 'projects/acme/cryptoKeys/k']) {
        const response = await create({ source: 'external', kmsProvider: 'gcp-kms', externalKeyId })
        expect(response.statusCode).toBe(400)
        expect(response.json().errors[0].path).toBe('body.externalKeyId')
      }
    })
  })

  describe('security', () => {
    it('the service account key and tokens reach neither answers nor logs', async () => {
      const name = versionOf(random('quiet'), 1)
      await gcp.addKey(name)
      const response = await create({ source: 'external', kmsProvider: 'gcp-kms', externalKeyId: name })
      expect(response.statusCode).toBe(201)
      const everything = `${response.body}\n${logLines.join('\n')}`
      expect(everything).not.toContain('PRIVATE KEY')
      expect(everything).not.toMatch(/Bearer [0-9a-f]{32}/)
    })
  })
})
