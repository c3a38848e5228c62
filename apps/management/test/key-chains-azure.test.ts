import { generateKeyPairSync } from 'node:crypto'
import { createAzureKeyVaultProvider, jwkContext, signJws } from '@credential-service/crypto'
import { startFakeAzureKeyVault } from '@credential-service/crypto/testing'
import { createKeyChainRepository } from '@credential-service/db-schema'
import { testDatabases } from '@credential-service/db-schema/testing'
import { compactVerify, createLocalJWKSet } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, type TestClient } from './harness'

const credentials = {
  tenantId: 'entra-tenant',
  clientId: 'issuer-app',
  clientSecret: 'azure-client-secret-value',
}

// Issue 40: key chains on Azure Key Vault keys, through a local implementation of its REST API.
describe.each(testDatabases())('Azure Key Vault key chains on $name', (testDatabase) => {
  let azure: Awaited<ReturnType<typeof startFakeAzureKeyVault>>
  let h: Harness
  let admin: TestClient
  const logLines: string[] = []
  const chains = (tenant: string) => `/api/tenants/${tenant}/key-chains`

  beforeAll(async () => {
    azure = await startFakeAzureKeyVault(credentials)
    h = await createHarness(testDatabase, {
      logLines,
      providers: {
        'azure-key-vault': createAzureKeyVaultProvider({
          vaultUrl: azure.url,
          authorityHost: azure.url,
          ...credentials,
        }),
      },
    })
    admin = await h.createClient(h.tenantA, ['key:manage'])
  })
  afterAll(async () => {
    await h?.close()
    await azure?.close()
  })

  const create = (payload: object) =>
    h.app.inject({ method: 'POST', url: chains(h.tenantA), headers: admin.auth, payload })

  async function roundTrip(keyChainId: string) {
    const signer = await h.keys.signer(h.tenantA, keyChainId)
    const jws = await signJws(signer, { kid: signer.kid }, { sub: 'azure' })
    const { payload } = await compactVerify(jws, createLocalJWKSet(await h.keys.jwks(h.tenantA)))
    expect(JSON.parse(new TextDecoder().decode(payload))).toStrictEqual({ sub: 'azure' })
  }

  describe('happy', () => {
    it('registers a key by name, pinned to its current version; signs and verifies via the JWKS', async () => {
      const name = random('pid').replaceAll('_', '-')
      const held = await azure.addKey(name, 'ES384')
      const id = random('azure')
      const response = await create({
        source: 'external',
        id,
        kmsProvider: 'azure-key-vault',
        externalKeyId: name,
      })
      expect(response.statusCode).toBe(201)
      expect(response.json()).toMatchObject({
        kmsProvider: 'azure-key-vault',
        externalKeyId: `${name}/${held.version}`,
        algorithm: 'ES384',
        certificateMode: 'none',
      })
      expect(response.json().activeKey.publicJwk).toStrictEqual(held.publicJwk)
      await roundTrip(id)
    })

    it('a key rotated in the vault is taken by POST rotate (the new version pinned); the old key stays published', async () => {
      const name = random('rot').replaceAll('_', '-')
      await azure.addKey(name)
      const id = random('azure')
      const created = (
        await create({ source: 'external', id, kmsProvider: 'azure-key-vault', externalKeyId: name })
      ).json()
      const rotate = () =>
        h.app.inject({
          method: 'POST',
          url: `${chains(h.tenantA)}/${id}/rotate`,
          headers: admin.auth,
          payload: {},
        })
      // Not rotated in the vault yet: the same key is a conflict.
      expect((await rotate()).statusCode).toBe(409)
      const next = await azure.rotate(name)
      const rotated = await rotate()
      expect(rotated.statusCode).toBe(200)
      expect(rotated.json()).toMatchObject({
        externalKeyId: `${name}/${next.version}`,
        previousKey: { kid: created.activeKey.kid },
      })
      const kids = (await h.keys.jwks(h.tenantA)).keys.map((key) => key.kid)
      expect(kids).toEqual(expect.arrayContaining([created.activeKey.kid, rotated.json().activeKey.kid]))
      await roundTrip(id)
    })
  })

  // Issue 40: "generation ..., import where it allows". Azure Key Vault Import Key (PUT /keys/{name}):
  // the private key goes to the vault once; the service keeps the public part and signs there.
  describe('import', () => {
    const privateJwk = (namedCurve: string) =>
      generateKeyPairSync('ec', { namedCurve }).privateKey.export({ format: 'jwk' })

    it('source import with kmsProvider azure-key-vault puts the key into the vault, self-signed; signs there and verifies via the JWKS', async () => {
      const jwk = privateJwk('P-256')
      const id = random('imported')
      const signsBefore = azure.requests.filter((r) => r.path.endsWith('/sign')).length
      const response = await create({ source: 'import', id, kmsProvider: 'azure-key-vault', privateKey: jwk })
      expect(response.statusCode, response.body).toBe(201)
      const body = response.json()
      expect(body).toMatchObject({
        kmsProvider: 'azure-key-vault',
        externalKeyId: expect.stringMatching(/^[0-9a-zA-Z-]+\/[0-9a-f]{32}$/),
        algorithm: 'ES256',
        certificateMode: 'self-signed',
      })
      expect(body.activeKey.publicJwk).toStrictEqual({ kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y })
      expect(azure.imported.at(-1)).toMatchObject({ hsm: true, exportable: false })
      await roundTrip(id)
      // Signed by the vault, not by a copy kept here.
      expect(azure.requests.filter((r) => r.path.endsWith('/sign')).length).toBeGreaterThan(signsBefore)
      // The database holds the public part only: no d under the encrypted column either.
      const row = await createKeyChainRepository(h.database.db, h.tenantA).get(id)
      const stored = h.keys.cipher.decrypt(row?.activeJwk as string, jwkContext(h.tenantA, id))
      expect(stored).toStrictEqual(body.activeKey.publicJwk)
      expect(response.body).not.toContain(jwk.d as string)
      expect(logLines.join('\n')).not.toContain(jwk.d as string)
    })

    it('refusals: an Ed25519 key is a 400 naming privateKey, a vault refusing HSM keys a 400 naming kmsProvider; nothing is written', async () => {
      const ed = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' })
      const id = random('refused')
      const edResponse = await create({
        source: 'import',
        id,
        kmsProvider: 'azure-key-vault',
        privateKey: ed,
      })
      expect(edResponse.statusCode).toBe(400)
      expect(edResponse.json().errors[0].path).toBe('body.privateKey')

      const standard = await startFakeAzureKeyVault(credentials, 'standard')
      const other = await createHarness(testDatabase, {
        providers: {
          'azure-key-vault': createAzureKeyVaultProvider({
            vaultUrl: standard.url,
            authorityHost: standard.url,
            ...credentials,
          }),
        },
      })
      try {
        const client = await other.createClient(other.tenantA, ['key:manage'])
        const jwk = privateJwk('P-384')
        const response = await other.app.inject({
          method: 'POST',
          url: chains(other.tenantA),
          headers: client.auth,
          payload: { source: 'import', id, kmsProvider: 'azure-key-vault', privateKey: jwk },
        })
        expect(response.statusCode).toBe(400)
        expect(response.json().errors[0]).toMatchObject({
          path: 'body.kmsProvider',
          message: expect.stringContaining('Forbidden'),
        })
        expect(response.body).not.toContain(jwk.d as string)
        expect(
          (await other.app.inject({ url: `${chains(other.tenantA)}/${id}`, headers: client.auth }))
            .statusCode,
        ).toBe(404)
      } finally {
        await other.close()
        await standard.close()
      }
    })
  })

  describe('error', () => {
    it('an unknown key is a 400 naming externalKeyId; nothing is written', async () => {
      const id = random('none')
      const response = await create({
        source: 'external',
        id,
        kmsProvider: 'azure-key-vault',
        externalKeyId: 'absent',
      })
      expect(response.statusCode).toBe(400)
      expect(response.json().errors[0].path).toBe('body.externalKeyId')
      expect(
        (await h.app.inject({ url: `${chains(h.tenantA)}/${id}`, headers: admin.auth })).statusCode,
      ).toBe(404)
    })
  })

  describe('security', () => {
    it('the client secret and tokens reach neither answers nor logs', async () => {
      const name = random('quiet').replaceAll('_', '-')
      await azure.addKey(name)
      const response = await create({
        source: 'external',
        kmsProvider: 'azure-key-vault',
        externalKeyId: name,
      })
      expect(response.body).not.toContain(credentials.clientSecret)
      expect(logLines.join('\n')).not.toContain(credentials.clientSecret)
      expect(logLines.join('\n')).not.toMatch(/Bearer [0-9a-f]{32}/)
    })
  })
})
