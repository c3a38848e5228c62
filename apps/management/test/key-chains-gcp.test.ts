import { createGcpKmsProvider, signJws } from '@credential-service/crypto'
import { startFakeGcpKms } from '@credential-service/crypto/testing'
import { testDatabases } from '@credential-service/db-schema/testing'
import { compactVerify, createLocalJWKSet } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, type TestClient } from './harness'

const versionOf = (key: string, n: number) =>
  `projects/acme/locations/europe-west3/keyRings/issuer/cryptoKeys/${key}/cryptoKeyVersions/${n}`

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
        'gcp-kms': createGcpKmsProvider({ serviceAccount: gcp.serviceAccount, endpoint: gcp.endpoint }),
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
