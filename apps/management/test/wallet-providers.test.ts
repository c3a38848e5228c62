import { createCertificate, generateKeyPair } from '@credential-service/crypto'
import { anchorsTrustListId } from '@credential-service/db-schema'
import { queryRows, testDatabases } from '@credential-service/db-schema/testing'
import { sql } from 'drizzle-orm'
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
      // Like the other providers, an absent description reads as null.
      expect(created.json()).toStrictEqual({
        id,
        name: 'Wallet GmbH',
        description: null,
        trustListIds: [anchorsTrustListId([anchor])],
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      })
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

  it('a wallet provider is deleted (204) even while configurations require attestations: no configuration names one', async () => {
    const configAdmin = await h.createClient(h.tenantA, ['issuance:config', 'key:manage'])
    const keyChainId = (
      await h.app.inject({
        method: 'POST',
        url: '/api/key-chains',
        headers: configAdmin.auth,
        payload: { source: 'generate' },
      })
    ).json().id
    const id = random('wp')
    await create(admin, { id, name: 'Only one', trustAnchors: [anchor] })
    const strict = await h.app.inject({
      method: 'POST',
      url: '/api/credentials',
      headers: configAdmin.auth,
      payload: {
        id: random('strict'),
        config: { format: 'dc+sd-jwt', vct: 'urn:example:strict' },
        keyChainId,
        fields: [{ path: ['name'], type: 'string', defaultValue: 'x' }],
        walletAttestation: 'required',
        keyAttestation: { required: true },
      },
    })
    expect(strict.statusCode, strict.body).toBe(201)
    const deleted = await h.app.inject({
      method: 'DELETE',
      url: `/api/wallet-providers/${id}`,
      headers: admin.auth,
    })
    expect(deleted.statusCode).toBe(204)
  })

  describe('trust lists', () => {
    const list = (id: string) =>
      create(admin, { id, source: { type: 'pem', certificates: [anchor] } }, '/api/trust-lists')

    it('a provider may be trusted only through trust lists: unknown ids are 422, a named list cannot be deleted (409)', async () => {
      const listId = random('tl')
      expect((await list(listId)).statusCode).toBe(201)
      const id = random('wp')
      const unknown = await create(admin, { id, name: 'Listed', trustListIds: [listId, 'missing'] })
      expect(unknown.statusCode).toBe(422)
      expect(unknown.json().errors).toStrictEqual([
        { path: 'body.trustListIds.1', message: "no trust list 'missing' in this tenant" },
      ])
      const created = await create(admin, { id, name: 'Listed', trustListIds: [listId] })
      expect(created.statusCode, created.body).toBe(201)
      expect(created.json()).toMatchObject({ trustListIds: [listId] })
      expect(created.json().trustAnchors).toBeUndefined()
      const refused = await h.app.inject({
        method: 'DELETE',
        url: `/api/trust-lists/${listId}`,
        headers: admin.auth,
      })
      expect(refused.statusCode).toBe(409)
      expect(refused.json().detail).toBe(
        `trust list '${listId}' is named by wallet provider(s) '${id}'; remove it from their trustListIds first`,
      )
      // Without the list (and with an anchor instead) the list is free to go.
      const replaced = await h.app.inject({
        method: 'PUT',
        url: `/api/wallet-providers/${id}`,
        headers: admin.auth,
        payload: { id, name: 'Listed', trustAnchors: [anchor] },
      })
      expect(replaced.statusCode, replaced.body).toBe(200)
      expect(replaced.json().trustListIds).toStrictEqual([anchorsTrustListId([anchor])])
      const deleted = await h.app.inject({
        method: 'DELETE',
        url: `/api/trust-lists/${listId}`,
        headers: admin.auth,
      })
      expect(deleted.statusCode).toBe(204)
    })

    it('another tenant’s list cannot be named', async () => {
      const listId = random('tl')
      expect((await list(listId)).statusCode).toBe(201)
      const response = await create(adminB, { id: random('wp'), name: 'B', trustListIds: [listId] })
      expect(response.statusCode).toBe(422)
      expect(response.json().errors).toStrictEqual([
        { path: 'body.trustListIds.0', message: `no trust list '${listId}' in this tenant` },
      ])
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
          { path: 'body.trustAnchors.1', message: 'not a valid PEM X.509 certificate' },
          { path: 'body.trustAnchors.2', message: 'not a valid PEM X.509 certificate' },
        ],
      })
    })

    it('issue 25: a provider with neither trustListIds nor trustAnchors is a 422', async () => {
      for (const body of [{ trustAnchors: [] }, {}, { trustListIds: [] }]) {
        const response = await create(admin, { id: random('wp'), name: 'Empty', ...body })
        expect(response.statusCode).toBe(422)
        expect(response.json().errors).toStrictEqual([
          {
            path: 'body.trustListIds',
            message:
              'a wallet provider needs a trust list in trustListIds (or trustAnchors, converted into one)',
          },
        ])
      }
    })
  })

  describe('security', () => {
    it('S-100: another tenant reads, replaces and deletes a wallet provider as 404, by either mount; it stays unchanged', async () => {
      const id = random('wp')
      expect((await create(admin, { id, name: 'A', trustAnchors: [anchor] })).statusCode).toBe(201)
      const before = (await h.app.inject({ url: `/api/wallet-providers/${id}`, headers: admin.auth })).json()
      const hijack = { id, name: 'Hijacked', trustAnchors: [anchor] }
      for (const attempt of [
        { method: 'GET', url: `/api/wallet-providers/${id}` },
        { method: 'PUT', url: `/api/wallet-providers/${id}`, payload: hijack },
        { method: 'DELETE', url: `/api/wallet-providers/${id}` },
        { method: 'GET', url: `/api/tenants/${h.tenantA}/wallet-providers` },
        { method: 'GET', url: `/api/tenants/${h.tenantA}/wallet-providers/${id}` },
        { method: 'PUT', url: `/api/tenants/${h.tenantA}/wallet-providers/${id}`, payload: hijack },
        { method: 'DELETE', url: `/api/tenants/${h.tenantA}/wallet-providers/${id}` },
        {
          method: 'POST',
          url: `/api/tenants/${h.tenantA}/wallet-providers`,
          payload: { id: random('wp'), name: 'B', trustAnchors: [anchor] },
        },
      ] as const) {
        const response = await h.app.inject({ ...attempt, headers: adminB.auth })
        expect(response.statusCode, `${attempt.method} ${attempt.url}`).toBe(404)
        expect(response.json().code).toBe('not_found')
      }
      const after = (await h.app.inject({ url: `/api/wallet-providers/${id}`, headers: admin.auth })).json()
      expect(after).toStrictEqual(before)
    })

    it('S-101: with two tenants, each lists only its own wallet providers; an unknown tenant is 404 for an operator', async () => {
      const ofA = random('wp')
      const ofB = random('wp')
      expect((await create(admin, { id: ofA, name: 'A', trustAnchors: [anchor] })).statusCode).toBe(201)
      expect((await create(adminB, { id: ofB, name: 'B', trustAnchors: [anchor] })).statusCode).toBe(201)
      const ids = async (url: string, client: TestClient) =>
        (await h.app.inject({ url, headers: client.auth }))
          .json()
          .items.map((item: { id: string }) => item.id)
      expect(await ids('/api/wallet-providers?limit=100', admin)).toContain(ofA)
      expect(await ids('/api/wallet-providers?limit=100', admin)).not.toContain(ofB)
      expect(await ids('/api/wallet-providers?limit=100', adminB)).toStrictEqual([ofB])
      const operator = await h.createClient(null, ['tenant:manage', 'issuance:config'])
      expect(await ids(`/api/tenants/${h.tenantB}/wallet-providers`, operator)).toStrictEqual([ofB])
      expect(
        (await h.app.inject({ url: '/api/tenants/no-such-tenant/wallet-providers', headers: operator.auth }))
          .statusCode,
      ).toBe(404)
    })

    it('audit: create, update and delete of a wallet provider are recorded with the actor, without anchors in the detail', async () => {
      const id = random('wp')
      await create(admin, { id, name: 'Audited', trustAnchors: [anchor] })
      await h.app.inject({
        method: 'PUT',
        url: `/api/wallet-providers/${id}`,
        headers: admin.auth,
        payload: { id, name: 'Audited 2', trustAnchors: [anchor] },
      })
      await h.app.inject({ method: 'DELETE', url: `/api/wallet-providers/${id}`, headers: admin.auth })
      const rows = await queryRows<{ action: string; actor_client_id: string; detail: unknown }>(
        h.database.db,
        sql`select action, actor_client_id, detail from audit_log
            where tenant_id = ${h.tenantA} and resource_type = 'wallet-provider' and resource_id = ${id}
            order by at`,
      )
      expect(rows.map((row) => `${row.action} ${row.actor_client_id}`)).toStrictEqual([
        `create ${admin.clientId}`,
        `update ${admin.clientId}`,
        `delete ${admin.clientId}`,
      ])
      const stored = JSON.stringify(rows)
      for (const value of ['Audited', 'BEGIN CERTIFICATE']) expect(stored).not.toContain(value)
    })
  })
})
