import { queryRows, testDatabases } from '@credential-service/db-schema/testing'
import { DEFAULT_HTTP_LIMITS } from '@credential-service/server-kit'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random } from './harness'

describe.each(testDatabases())('tenants on $name', (testDatabase) => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness(testDatabase)
  })
  afterAll(() => h.close())

  describe('happy', () => {
    it('creates, reads, updates and deletes a tenant', async () => {
      const id = random('acme')
      const created = await h.app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: h.root.auth,
        payload: { id, name: 'ACME', description: 'test' },
      })
      expect(created.statusCode).toBe(201)
      expect(created.json()).toStrictEqual({
        id,
        name: 'ACME',
        description: 'test',
        presentationRetention: 'keep',
        credentialEncryption: 'optional',
        country: null,
        issuerDisplay: null,
        defaultKeyChainId: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      })

      const patched = await h.app.inject({
        method: 'PATCH',
        url: `/api/tenants/${id}`,
        headers: h.root.auth,
        payload: {
          name: 'ACME Corp',
          description: null,
          presentationRetention: 'drop-after-delivery',
          credentialEncryption: 'required',
          country: 'FR',
        },
      })
      expect(patched.json()).toMatchObject({
        id,
        name: 'ACME Corp',
        description: null,
        presentationRetention: 'drop-after-delivery',
        credentialEncryption: 'required',
        country: 'FR',
      })

      const got = await h.app.inject({ url: `/api/tenants/${id}`, headers: h.root.auth })
      expect(got.json()).toStrictEqual(patched.json())

      expect(
        (await h.app.inject({ method: 'DELETE', url: `/api/tenants/${id}`, headers: h.root.auth }))
          .statusCode,
      ).toBe(204)
      expect((await h.app.inject({ url: `/api/tenants/${id}`, headers: h.root.auth })).statusCode).toBe(404)
    })

    it('generates a tenant id when none is given', async () => {
      const created = await h.app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: h.root.auth,
        payload: { name: 'No id' },
      })
      expect(created.statusCode).toBe(201)
      expect(created.json().id).toMatch(/^t_[0-9a-z]{20}$/)
    })

    it('pages through tenants with a cursor', async () => {
      const seen: string[] = []
      let cursor: string | undefined
      do {
        const page = await h.app.inject({
          url: `/api/tenants?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
          headers: h.root.auth,
        })
        const body = page.json()
        expect(body.items.length).toBeLessThanOrEqual(1)
        seen.push(...body.items.map((t: { id: string }) => t.id))
        cursor = body.nextCursor ?? undefined
      } while (cursor)
      expect(seen).toContain(h.tenantA)
      expect(seen).toContain(h.tenantB)
      expect(new Set(seen).size).toBe(seen.length)
      expect([...seen].sort()).toStrictEqual(seen)
    })

    it('deleting a tenant removes its clients: their secrets stop working', async () => {
      const id = random('gone')
      await h.app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: h.root.auth,
        payload: { id, name: id },
      })
      const client = await h.createClient(id, ['key:read'])
      await h.app.inject({ method: 'DELETE', url: `/api/tenants/${id}`, headers: h.root.auth })
      await expect(h.tokenFor(client.clientId, client.clientSecret)).rejects.toThrow(/401/)
    })

    it('writes an audit entry per change, naming the actor', async () => {
      const id = random('audited')
      await h.app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: h.root.auth,
        payload: { id, name: id },
      })
      await h.app.inject({
        method: 'PATCH',
        url: `/api/tenants/${id}`,
        headers: h.root.auth,
        payload: { name: 'x' },
      })
      const rows = await queryRows(
        h.database.db,
        sql`select action, actor_client_id, resource_type from audit_log where tenant_id = ${id} order by at`,
      )
      expect(rows).toStrictEqual([
        { action: 'create', actor_client_id: h.root.clientId, resource_type: 'tenant' },
        { action: 'update', actor_client_id: h.root.clientId, resource_type: 'tenant' },
      ])
    })
  })

  describe('error', () => {
    it('a taken id is 409 problem+json', async () => {
      const response = await h.app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: h.root.auth,
        payload: { id: h.tenantA, name: 'dup' },
      })
      expect(response.statusCode).toBe(409)
      expect(response.headers['content-type']).toContain('application/problem+json')
      expect(response.json()).toStrictEqual({
        type: 'https://credential-service.dev/problems/conflict',
        title: 'Conflict',
        status: 409,
        detail: `tenant '${h.tenantA}' already exists`,
        instance: '/api/tenants',
        code: 'conflict',
      })
    })

    it('RFC 9457: an invalid id and an unknown field are named in errors[]', async () => {
      const response = await h.app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: h.root.auth,
        payload: { id: 'Not A Slug', name: 'x', claims: {} },
      })
      expect(response.statusCode).toBe(400)
      const body = response.json()
      expect(body.code).toBe('invalid_input')
      expect(body.errors).toEqual(
        expect.arrayContaining([
          { path: 'body.id', message: expect.any(String) },
          { path: 'body.claims', message: "unknown field 'claims'" },
        ]),
      )
    })

    it('RFC 9457: an invalid credentialEncryption or presentationRetention is a 400 naming the field, on create and update; nothing is written', async () => {
      const id = random('enc')
      const created = await h.app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: h.root.auth,
        payload: { id, name: 'x', credentialEncryption: 'always', presentationRetention: 'forever' },
      })
      expect(created.statusCode).toBe(400)
      expect(
        created
          .json()
          .errors.map((e: { path: string }) => e.path)
          .sort(),
      ).toStrictEqual(['body.credentialEncryption', 'body.presentationRetention'])
      expect((await h.app.inject({ url: `/api/tenants/${id}`, headers: h.root.auth })).statusCode).toBe(404)
      const patched = await h.app.inject({
        method: 'PATCH',
        url: `/api/tenants/${h.tenantA}`,
        headers: h.root.auth,
        payload: { credentialEncryption: true },
      })
      expect(patched.statusCode).toBe(400)
      expect(patched.json().errors).toStrictEqual([
        { path: 'body.credentialEncryption', message: expect.any(String) },
      ])
      expect(
        (await h.app.inject({ url: `/api/tenants/${h.tenantA}`, headers: h.root.auth })).json()
          .credentialEncryption,
      ).toBe('optional')
    })

    it('issue 43: a country that is not ISO 3166-1 alpha-2 in capitals is a 400 naming body.country, on create and update; null clears it', async () => {
      const id = random('cty')
      for (const country of ['de', 'DEU', 'D', 12]) {
        const created = await h.app.inject({
          method: 'POST',
          url: '/api/tenants',
          headers: h.root.auth,
          payload: { id, name: 'x', country },
        })
        expect(created.statusCode).toBe(400)
        expect(created.json().errors).toStrictEqual([{ path: 'body.country', message: expect.any(String) }])
      }
      expect((await h.app.inject({ url: `/api/tenants/${id}`, headers: h.root.auth })).statusCode).toBe(404)
      const created = await h.app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: h.root.auth,
        payload: { id, name: 'x', country: 'NL' },
      })
      expect(created.json().country).toBe('NL')
      const patch = (country: unknown) =>
        h.app.inject({
          method: 'PATCH',
          url: `/api/tenants/${id}`,
          headers: h.root.auth,
          payload: { country },
        })
      const refused = await patch('nl')
      expect(refused.statusCode).toBe(400)
      expect(refused.json().errors).toStrictEqual([{ path: 'body.country', message: expect.any(String) }])
      expect((await h.app.inject({ url: `/api/tenants/${id}`, headers: h.root.auth })).json().country).toBe(
        'NL',
      )
      expect((await patch(null)).json().country).toBeNull()
    })

    it('malformed JSON is a 400 problem and writes nothing', async () => {
      const id = random('malformed')
      const response = await h.app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: { ...h.root.auth, 'content-type': 'application/json' },
        payload: `{"id": "${id}", "name": `,
      })
      expect(response.statusCode).toBe(400)
      expect(response.json().code).toBe('malformed_request')
      expect((await h.app.inject({ url: `/api/tenants/${id}`, headers: h.root.auth })).statusCode).toBe(404)
    })

    it('a wrong content type is a 415 problem and writes nothing', async () => {
      const id = random('xml')
      const response = await h.app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: { ...h.root.auth, 'content-type': 'application/xml' },
        payload: `<tenant id="${id}"/>`,
      })
      expect(response.statusCode).toBe(415)
      expect(response.json().code).toBe('unsupported_media_type')
      expect((await h.app.inject({ url: `/api/tenants/${id}`, headers: h.root.auth })).statusCode).toBe(404)
    })

    it('an oversized body is a 413 problem and writes nothing', async () => {
      const id = random('big')
      const response = await h.app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: h.root.auth,
        // The default BODY_LIMIT_BYTES of text alone: the JSON around it goes past the limit.
        payload: { id, name: 'big', description: 'x'.repeat(DEFAULT_HTTP_LIMITS.bodyBytes) },
      })
      expect(response.statusCode).toBe(413)
      expect(response.json().code).toBe('payload_too_large')
      expect((await h.app.inject({ url: `/api/tenants/${id}`, headers: h.root.auth })).statusCode).toBe(404)
    })

    it('an unknown route under /api is a 404 problem', async () => {
      const response = await h.app.inject({ url: '/api/nothing-here', headers: h.root.auth })
      expect(response.statusCode).toBe(404)
      expect(response.json().code).toBe('route_not_found')
    })
  })

  describe('security', () => {
    it('a tenant client lists only its own tenant', async () => {
      const reader = await h.createClient(h.tenantB, ['tenant:read'])
      const response = await h.app.inject({ url: '/api/tenants', headers: reader.auth })
      expect(response.json().items.map((t: { id: string }) => t.id)).toStrictEqual([h.tenantB])
    })

    it('another tenant’s tenant record is 404, for read and for update', async () => {
      const admin = await h.createClient(h.tenantB, ['tenant:admin'])
      expect((await h.app.inject({ url: `/api/tenants/${h.tenantA}`, headers: admin.auth })).statusCode).toBe(
        404,
      )
      const patch = await h.app.inject({
        method: 'PATCH',
        url: `/api/tenants/${h.tenantA}`,
        headers: admin.auth,
        payload: { name: 'pwned' },
      })
      expect(patch.statusCode).toBe(404)
      const a = await h.app.inject({ url: `/api/tenants/${h.tenantA}`, headers: h.root.auth })
      expect(a.json().name).toBe(h.tenantA)
    })

    it('S-108: a token of a deleted tenant is invalid_token, also once a tenant with its id exists again', async () => {
      const id = random('reborn')
      const create = () =>
        h.app.inject({ method: 'POST', url: '/api/tenants', headers: h.root.auth, payload: { id, name: id } })
      expect((await create()).statusCode).toBe(201)
      const old = await h.createClient(id, ['key:read', 'tenant:read'])
      expect((await h.app.inject({ url: '/api/key-chains', headers: old.auth })).statusCode).toBe(200)

      await h.app.inject({ method: 'DELETE', url: `/api/tenants/${id}`, headers: h.root.auth })
      const gone = await h.app.inject({ url: '/api/key-chains', headers: old.auth })
      expect(gone.statusCode).toBe(401)
      expect(gone.headers['www-authenticate']).toBe(
        'Bearer realm="credential-service", error="invalid_token"',
      )
      expect(gone.json()).toMatchObject({ code: 'unauthenticated', status: 401 })

      expect((await create()).statusCode).toBe(201)
      for (const url of ['/api/key-chains', `/api/tenants/${id}/key-chains`, `/api/tenants/${id}`]) {
        const reused = await h.app.inject({ url, headers: old.auth })
        expect(reused.statusCode, url).toBe(401)
        expect(reused.headers['www-authenticate']).toContain('error="invalid_token"')
      }

      const fresh = await h.createClient(id, ['key:read'])
      expect((await h.app.inject({ url: '/api/key-chains', headers: fresh.auth })).statusCode).toBe(200)
      // Operator tokens name no tenant and are not affected.
      expect((await h.app.inject({ url: `/api/tenants/${id}`, headers: h.root.auth })).statusCode).toBe(200)
    })

    it('a tenant admin may update its own tenant, its settings included', async () => {
      const admin = await h.createClient(h.tenantB, ['tenant:admin'])
      const patch = await h.app.inject({
        method: 'PATCH',
        url: `/api/tenants/${h.tenantB}`,
        headers: admin.auth,
        payload: {
          description: 'mine',
          credentialEncryption: 'required',
          presentationRetention: 'drop-after-delivery',
        },
      })
      expect(patch.statusCode).toBe(200)
      expect(patch.json()).toMatchObject({
        description: 'mine',
        credentialEncryption: 'required',
        presentationRetention: 'drop-after-delivery',
      })
      // tenant:read may read it, not change it.
      const reader = await h.createClient(h.tenantB, ['tenant:read'])
      const refused = await h.app.inject({
        method: 'PATCH',
        url: `/api/tenants/${h.tenantB}`,
        headers: reader.auth,
        payload: { credentialEncryption: 'optional' },
      })
      expect(refused.statusCode).toBe(403)
      expect(
        (await h.app.inject({ url: `/api/tenants/${h.tenantB}`, headers: admin.auth })).json()
          .credentialEncryption,
      ).toBe('required')
    })

    it('S-100: an operator naming a tenant that does not exist gets 404 from every tenant collection, status lists included', async () => {
      const operator = await h.createClient(null, [
        'tenant:manage',
        'issuance:config',
        'issuance:offer',
        'presentation:config',
        'key:manage',
      ])
      for (const collection of [
        'credentials',
        'presentations',
        'attribute-providers',
        'login-providers',
        'wallet-providers',
        'webhook-endpoints',
        'key-chains',
        'status-lists',
      ]) {
        const response = await h.app.inject({
          url: `/api/tenants/no-such-tenant/${collection}`,
          headers: operator.auth,
        })
        expect(response.statusCode, collection).toBe(404)
        expect(response.json().code).toBe('not_found')
      }
    })
  })
})
