import { generateKeyPairSync } from 'node:crypto'
import { startFakeGcpKms } from '@credential-service/crypto/testing'
import { startWorld, type World } from '@credential-service/management/testing'
import { compactVerify, decodeProtectedHeader, importJWK, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildIssuerApp } from '../src/app'
import { readyToRequest, requestCredential } from './world'

const RING = 'projects/issuer/locations/europe-west3/keyRings/pid'

// Issue 40: a key chain file that imports a known P-256 key into Cloud KMS at config import
// (test/worlds/cloud-kms-import: `source: import`, `kmsProvider: gcp-kms`), through the local
// implementation of Cloud KMS's import jobs; wallets get credentials signed there.
describe('an issuer whose key was imported into Cloud KMS by config import', () => {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' })
  const known = { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y } as JWK
  let gcp: Awaited<ReturnType<typeof startFakeGcpKms>>
  let world: World
  beforeAll(async () => {
    gcp = await startFakeGcpKms()
    world = await startWorld('cloud-kms-import', {
      env: {
        GCP_KMS_CREDENTIALS: 'env:TEST_GCP_SERVICE_ACCOUNT',
        TEST_GCP_SERVICE_ACCOUNT: JSON.stringify(gcp.serviceAccount),
        GCP_KMS_ENDPOINT: gcp.endpoint,
        GCP_KMS_KEY_RING: RING,
        IMPORT_KEY_X: jwk.x as string,
        IMPORT_KEY_Y: jwk.y as string,
        IMPORT_KEY_D: jwk.d as string,
      },
      apps: ({ config, database }) => [buildIssuerApp({ config, database, noncePurgeSeconds: 0 })],
    })
  })
  afterAll(async () => {
    await world?.close()
    await gcp?.close()
  })

  it('the key is version 1 of an HSM key in the ring; the credential verifies with the public key known before the import', async () => {
    const { a } = world.tenants
    const chain = await world.management.inject({ url: '/api/key-chains/imported', headers: a.auth })
    expect(chain.json()).toMatchObject({
      kmsProvider: 'gcp-kms',
      externalKeyId: expect.stringMatching(
        new RegExp(`^${RING}/cryptoKeys/[a-zA-Z0-9_-]+/cryptoKeyVersions/1$`),
      ),
      algorithm: 'ES256',
      activeKey: { publicJwk: known },
    })
    expect(gcp.imported).toHaveLength(1)
    expect(gcp.created).toMatchObject([{ importOnly: true, protectionLevel: 'HSM' }])
    expect(chain.body).not.toContain(jwk.d as string)

    const ready = await readyToRequest(world, 'a')
    const response = await requestCredential(world, a.id, ready.accessToken, ready.body)
    expect(response.statusCode, response.body).toBe(200)
    const issuerJwt = (response.json().credentials[0].credential as string).split('~')[0] as string
    expect(decodeProtectedHeader(issuerJwt).kid).toBe(chain.json().activeKey.kid)
    await expect(compactVerify(issuerJwt, await importJWK(known, 'ES256'))).resolves.toBeDefined()
    expect(gcp.requests.some((request) => request.path.endsWith(':asymmetricSign'))).toBe(true)
  })
})
