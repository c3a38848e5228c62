import { testDatabases } from '@credential-service/db-schema/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random } from './harness'

describe.each(testDatabases())('clients on $name', (testDatabase) => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness(testDatabase)
  })
  afterAll(() => h.close())

  const clientsOf = (tenantId: string) => `/api/tenants/${tenantId}/clients`

  describe('happy', () => {
    it('spec §2.5: creates a client with a generated secret shown once, hashed at rest', async () => {
      const created = await h.app.inject({
        method: 'POST',
        url: clientsOf(h.tenantA),
        headers: h.root.auth,
        payload: {
          roles: ['issuance:offer'],
          allowedIssuanceConfigs: ['pid'],
          description: 'wallet backend',
        },
      })
      expect(created.statusCode).toBe(201)
      const body = created.json()
      expect(body).toStrictEqual({
        clientId: expect.stringMatching(/^cli_[0-9a-z]{20}$/),
        clientSecret: expect.any(String),
        tenantId: h.tenantA,
        description: 'wallet backend',
        roles: ['issuance:offer'],
        allowedIssuanceConfigs: ['pid'],
        allowedPresentationConfigs: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        secretRotatedAt: expect.any(String),
      })
      expect(body.clientSecret.length).toBeGreaterThanOrEqual(40)

      const got = await h.app.inject({
        url: `${clientsOf(h.tenantA)}/${body.clientId}`,
        headers: h.root.auth,
      })
      const { clientSecret: _shownOnce, ...withoutSecret } = body
      expect(got.json()).toStrictEqual(withoutSecret)
      expect(got.body).not.toContain(body.clientSecret)
      expect(got.body).not.toContain('$2') // no bcrypt hash either

      const list = await h.app.inject({ url: clientsOf(h.tenantA), headers: h.root.auth })
      expect(list.json().items.map((c: { clientId: string }) => c.clientId)).toContain(body.clientId)
      expect(list.body).not.toContain(body.clientSecret)
      expect(await h.tokenFor(body.clientId, body.clientSecret)).toEqual(expect.any(String))
    })

    it('accepts a given client id and secret (the restricted-client example)', async () => {
      const clientId = random('restricted')
      const clientSecret = 'a-secret-chosen-by-the-integrator'
      const created = await h.app.inject({
        method: 'POST',
        url: clientsOf(h.tenantA),
        headers: h.root.auth,
        payload: {
          clientId,
          clientSecret,
          roles: ['presentation:request'],
          allowedPresentationConfigs: ['age-over-18'],
          allowedIssuanceConfigs: [],
        },
      })
      expect(created.statusCode).toBe(201)
      expect(created.json()).toMatchObject({
        clientId,
        clientSecret,
        allowedPresentationConfigs: ['age-over-18'],
        allowedIssuanceConfigs: [],
      })
      expect(await h.tokenFor(clientId, clientSecret)).toEqual(expect.any(String))
    })

    it('updates roles and allowed lists; the next token carries the new roles', async () => {
      const client = await h.createClient(h.tenantA, ['key:read'])
      const updated = await h.app.inject({
        method: 'PATCH',
        url: `${clientsOf(h.tenantA)}/${client.clientId}`,
        headers: h.root.auth,
        payload: { roles: ['key:read', 'key:manage'], allowedIssuanceConfigs: null },
      })
      expect(updated.statusCode).toBe(200)
      expect(updated.json().roles).toStrictEqual(['key:read', 'key:manage'])
      const token = await h.tokenFor(client.clientId, client.clientSecret)
      const { decodeJwt } = await import('jose')
      expect(decodeJwt(token).roles).toStrictEqual(['key:read', 'key:manage'])
    })

    it('spec §5 rule 5: rotate secret returns a new secret once; the old one is refused at once', async () => {
      const client = await h.createClient(h.tenantA, ['key:read'])
      const rotated = await h.app.inject({
        method: 'POST',
        url: `${clientsOf(h.tenantA)}/${client.clientId}/rotate-secret`,
        headers: h.root.auth,
      })
      expect(rotated.statusCode).toBe(200)
      const { clientSecret } = rotated.json()
      expect(clientSecret).not.toBe(client.clientSecret)
      await expect(h.tokenFor(client.clientId, client.clientSecret)).rejects.toThrow(/401/)
      expect(await h.tokenFor(client.clientId, clientSecret)).toEqual(expect.any(String))
    })

    it('the shorthand /api/clients acts on the token’s tenant', async () => {
      const admin = await h.createClient(h.tenantB, ['tenant:admin'])
      const created = await h.app.inject({
        method: 'POST',
        url: '/api/clients',
        headers: admin.auth,
        payload: { roles: ['key:read'] },
      })
      expect(created.statusCode).toBe(201)
      expect(created.json().tenantId).toBe(h.tenantB)
      const list = await h.app.inject({ url: '/api/clients', headers: admin.auth })
      const ids = list.json().items.map((c: { clientId: string }) => c.clientId)
      expect(ids).toContain(created.json().clientId)
      expect(ids).toContain(admin.clientId)
    })

    it('spec §5 rule 3: an operator creates operator clients on /api/clients, bound to no tenant', async () => {
      const created = await h.app.inject({
        method: 'POST',
        url: '/api/clients',
        headers: h.root.auth,
        payload: { roles: ['tenant:manage', 'tenant:read'] },
      })
      expect(created.statusCode).toBe(201)
      expect(created.json().tenantId).toBeNull()
      const { decodeJwt } = await import('jose')
      expect(
        decodeJwt(await h.tokenFor(created.json().clientId, created.json().clientSecret)).sub,
      ).toBeUndefined()
    })

    it('deletes a client; its secret stops working', async () => {
      const client = await h.createClient(h.tenantA, ['key:read'])
      const deleted = await h.app.inject({
        method: 'DELETE',
        url: `${clientsOf(h.tenantA)}/${client.clientId}`,
        headers: h.root.auth,
      })
      expect(deleted.statusCode).toBe(204)
      await expect(h.tokenFor(client.clientId, client.clientSecret)).rejects.toThrow(/401/)
    })
  })

  describe('error', () => {
    it('spec §5 rule 3: a tenant:manage client is refused a tenant', async () => {
      const response = await h.app.inject({
        method: 'POST',
        url: clientsOf(h.tenantA),
        headers: h.root.auth,
        payload: { roles: ['tenant:manage'] },
      })
      expect(response.statusCode).toBe(400)
      expect(response.json().errors).toStrictEqual([
        { path: 'body.roles', message: expect.stringContaining('tenant:manage') },
      ])
      const promote = await h.createClient(h.tenantA, ['key:read'])
      const patch = await h.app.inject({
        method: 'PATCH',
        url: `${clientsOf(h.tenantA)}/${promote.clientId}`,
        headers: h.root.auth,
        payload: { roles: ['tenant:manage'] },
      })
      expect(patch.statusCode).toBe(400)
    })

    it('spec §5 rule 2: an operator client without tenant:manage is refused', async () => {
      const response = await h.app.inject({
        method: 'POST',
        url: '/api/clients',
        headers: h.root.auth,
        payload: { roles: ['key:read'] },
      })
      expect(response.statusCode).toBe(400)
      expect(response.json().errors[0].path).toBe('body.roles')
    })

    it('an unknown role, repeated roles and unknown fields are named', async () => {
      const response = await h.app.inject({
        method: 'POST',
        url: clientsOf(h.tenantA),
        headers: h.root.auth,
        payload: { roles: ['key:read', 'root'], secret: 'x' },
      })
      expect(response.statusCode).toBe(400)
      const paths = response.json().errors.map((e: { path: string }) => e.path)
      expect(paths).toEqual(expect.arrayContaining(['body.roles.1', 'body.secret']))
    })

    it('issue 36: 10,000-item lists on the three client writes answer one small 400 each; nothing is written', async () => {
      const admin = await h.createClient(h.tenantA, ['tenant:admin'])
      const target = await h.createClient(h.tenantA, ['key:read'])
      const huge = Array.from({ length: 10_000 }, (_, i) => `item-${i}`)
      const body = { roles: huge, allowedPresentationConfigs: huge, allowedIssuanceConfigs: huge }
      const listed = async () =>
        (await h.app.inject({ url: clientsOf(h.tenantA), headers: h.root.auth })).body
      const before = await listed()
      const writes = [
        { method: 'POST', url: '/api/clients', headers: admin.auth },
        { method: 'POST', url: clientsOf(h.tenantA), headers: h.root.auth },
        { method: 'PATCH', url: `/api/clients/${target.clientId}`, headers: admin.auth },
      ] as const
      for (const write of writes) {
        const response = await h.app.inject({ ...write, payload: body })
        expect(response.statusCode, write.url).toBe(400)
        expect(response.body.length).toBeLessThan(16_384)
        // One issue per list: its length is checked before any item is.
        expect(response.json().errors.map((e: { path: string }) => e.path)).toStrictEqual([
          'body.roles',
          'body.allowedPresentationConfigs',
          'body.allowedIssuanceConfigs',
        ])
      }
      expect(await listed()).toBe(before)
      const kept = await h.app.inject({ url: `/api/clients/${target.clientId}`, headers: admin.auth })
      expect(kept.json()).toMatchObject({ roles: ['key:read'], allowedPresentationConfigs: null })
    })

    it('issue 36: a problem lists the first 20 issues and counts them all (10,000 unknown fields)', async () => {
      const unknown = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`field${i}`, i]))
      const response = await h.app.inject({
        method: 'POST',
        url: clientsOf(h.tenantA),
        headers: h.root.auth,
        payload: { roles: ['key:read'], ...unknown },
      })
      expect(response.statusCode).toBe(400)
      expect(response.body.length).toBeLessThan(16_384)
      const problem = response.json()
      expect(problem).toStrictEqual({
        type: 'https://credential-service.dev/problems/invalid-input',
        title: 'Invalid input',
        status: 400,
        detail: 'the request body is invalid',
        instance: clientsOf(h.tenantA),
        code: 'invalid_input',
        errors: Array.from({ length: 20 }, (_, i) => ({
          path: `body.field${i}`,
          message: `unknown field 'field${i}'`,
        })),
        errorCount: 10_000,
      })
    })

    it('a taken client id is 409 and the existing client is untouched', async () => {
      const existing = await h.createClient(h.tenantA, ['key:read'])
      const response = await h.app.inject({
        method: 'POST',
        url: clientsOf(h.tenantB),
        headers: h.root.auth,
        payload: { clientId: existing.clientId, roles: ['key:manage'] },
      })
      expect(response.statusCode).toBe(409)
      expect(await h.tokenFor(existing.clientId, existing.clientSecret)).toEqual(expect.any(String))
    })

    it('a client cannot delete itself', async () => {
      const admin = await h.createClient(h.tenantA, ['tenant:admin'])
      const response = await h.app.inject({
        method: 'DELETE',
        url: `/api/clients/${admin.clientId}`,
        headers: admin.auth,
      })
      expect(response.statusCode).toBe(409)
    })

    it('clients of a tenant that does not exist are 404', async () => {
      const response = await h.app.inject({ url: clientsOf('no-such-tenant'), headers: h.root.auth })
      expect(response.statusCode).toBe(404)
    })
  })

  describe('security', () => {
    it('issue 11: a rotated secret over 72 bytes counts in full; one sharing its first 72 bytes is refused', async () => {
      const client = await h.createClient(h.tenantA, ['key:read'])
      const secret = `${'r'.repeat(72)}-rotated`
      const rotated = await h.app.inject({
        method: 'POST',
        url: `${clientsOf(h.tenantA)}/${client.clientId}/rotate-secret`,
        headers: h.root.auth,
        payload: { clientSecret: secret },
      })
      expect(rotated.statusCode).toBe(200)
      await expect(h.tokenFor(client.clientId, `${'r'.repeat(72)}-guessed`)).rejects.toThrow(/401/)
      expect(await h.tokenFor(client.clientId, secret)).toEqual(expect.any(String))
    })

    it('issue 11: the root client from an AUTH_CLIENT_SECRET over 72 bytes counts every byte', async () => {
      const secret = `${'a'.repeat(72)}-root`
      const withLongRoot = await createHarness(testDatabase, { env: { AUTH_CLIENT_SECRET: secret } })
      try {
        expect(withLongRoot.root.clientSecret).toBe(secret)
        await expect(
          withLongRoot.tokenFor(withLongRoot.root.clientId, `${'a'.repeat(72)}-other`),
        ).rejects.toThrow(/401/)
      } finally {
        await withLongRoot.close()
      }
    })

    it('another tenant’s client is 404 on every operation, and stays unchanged', async () => {
      const victim = await h.createClient(h.tenantA, ['key:read'])
      const attacker = await h.createClient(h.tenantB, ['tenant:admin'])
      const attempts = [
        { method: 'GET', url: `${clientsOf(h.tenantA)}/${victim.clientId}` },
        { method: 'GET', url: clientsOf(h.tenantA) },
        { method: 'GET', url: `/api/clients/${victim.clientId}` },
        { method: 'PATCH', url: `/api/clients/${victim.clientId}`, payload: { roles: ['key:manage'] } },
        { method: 'POST', url: `/api/clients/${victim.clientId}/rotate-secret`, payload: {} },
        { method: 'DELETE', url: `/api/clients/${victim.clientId}` },
        { method: 'POST', url: clientsOf(h.tenantA), payload: { roles: ['key:read'] } },
      ] as const
      for (const attempt of attempts) {
        const response = await h.app.inject({ ...attempt, headers: attacker.auth })
        expect(response.statusCode, `${attempt.method} ${attempt.url}`).toBe(404)
      }
      expect(await h.tokenFor(victim.clientId, victim.clientSecret)).toEqual(expect.any(String))
      const check = await h.app.inject({
        url: `${clientsOf(h.tenantA)}/${victim.clientId}`,
        headers: h.root.auth,
      })
      expect(check.json().roles).toStrictEqual(['key:read'])
    })

    it('an operator’s shorthand list holds operator clients only, never tenant clients', async () => {
      const tenantClient = await h.createClient(h.tenantA, ['key:read'])
      const list = await h.app.inject({ url: '/api/clients?limit=100', headers: h.root.auth })
      const items = list.json().items as { clientId: string; tenantId: string | null }[]
      expect(items.every((c) => c.tenantId === null)).toBe(true)
      expect(items.map((c) => c.clientId)).not.toContain(tenantClient.clientId)
    })
  })
})
