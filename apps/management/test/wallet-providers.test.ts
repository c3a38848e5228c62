import { createCertificate, generateKeyPair } from '@credential-service/crypto'
import { testDatabases } from '@credential-service/db-schema/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, type TestClient } from './harness'

describe.each(testDatabases())('wallet providers on $name', (testDatabase) => {
  let h: Harness
  let admin: TestClient
  let adminB: TestClient
  let anchor: string

  beforeAll(async () => {
    h = await createHarness(testDatabase)
    admin = await h.createClient(h.tenantA, ['issuance:config'])
    adminB = await h.createClient(h.tenantB, ['issuance:config'])
    const keys = await generateKeyPair('ES256')
    anchor = await createCertificate({
      subjectPublicJwk: keys.publicJwk,
      subject: 'CN=Wallet Provider Root',
      issuerPrivateJwk: keys.privateJwk,
      validityDays: 30,
      ca: true,
    })
  }, 120_000)
  afterAll(() => h.close())

  const create = (client: TestClient, payload: Record<string, unknown>, url = '/api/wallet-providers') =>
    h.app.inject({ method: 'POST', url, headers: client.auth, payload })

  describe('happy', () => {
    it('I-48, I-65: creates, reads, lists, replaces and deletes a wallet provider (both mounts)', async () => {
      const id = random('wp')
      const created = await create(admin, { id, name: 'Wallet GmbH', trustAnchors: [anchor] })
      expect(created.statusCode, created.body).toBe(201)
      expect(created.json()).toMatchObject({ id, name: 'Wallet GmbH', trustAnchors: [anchor] })
      const read = await h.app.inject({
        url: `/api/tenants/${h.tenantA}/wallet-providers/${id}`,
        headers: admin.auth,
      })
      expect(read.json().name).toBe('Wallet GmbH')
      const list = await h.app.inject({ url: '/api/wallet-providers', headers: admin.auth })
      expect(list.json().items.map((item: { id: string }) => item.id)).toContain(id)
      const replaced = await h.app.inject({
        method: 'PUT',
        url: `/api/wallet-providers/${id}`,
        headers: admin.auth,
        payload: { id, name: 'Renamed', trustAnchors: [anchor] },
      })
      expect(replaced.json().name).toBe('Renamed')
      const deleted = await h.app.inject({
        method: 'DELETE',
        url: `/api/wallet-providers/${id}`,
        headers: admin.auth,
      })
      expect(deleted.statusCode).toBe(204)
    })
  })

  describe('error', () => {
    it('RFC 9457: a trust anchor that is not a PEM certificate is a 422 naming it', async () => {
      const response = await create(admin, {
        id: random('wp'),
        name: 'Broken',
        trustAnchors: [anchor, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----', 'hello'],
      })
      expect(response.statusCode).toBe(422)
      expect(response.json()).toMatchObject({
        code: 'rule_violation',
        errors: [
          { path: 'trustAnchors.1', message: 'not a valid PEM X.509 certificate' },
          { path: 'trustAnchors.2', message: 'not a valid PEM X.509 certificate' },
        ],
      })
    })

    it('a body without trust anchors is a 400', async () => {
      const response = await create(admin, { id: random('wp'), name: 'Empty', trustAnchors: [] })
      expect(response.statusCode).toBe(400)
    })
  })

  describe('security', () => {
    it('another tenant reads a wallet provider as 404 and writes into that tenant as 404', async () => {
      const id = random('wp')
      expect((await create(admin, { id, name: 'A', trustAnchors: [anchor] })).statusCode).toBe(201)
      const read = await h.app.inject({ url: `/api/wallet-providers/${id}`, headers: adminB.auth })
      expect(read.statusCode).toBe(404)
      const foreign = await create(
        adminB,
        { id: random('wp'), name: 'B', trustAnchors: [anchor] },
        `/api/tenants/${h.tenantA}/wallet-providers`,
      )
      expect(foreign.statusCode).toBe(404)
    })
  })
})
