import { tenantChanged } from '@credential-service/db-schema'
import { testDatabases } from '@credential-service/db-schema/testing'
import { createTenantCache } from '@credential-service/server-kit'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AllInOne, bearer, startAllInOne } from './harness'

// Protocol endpoints read configurations and key chains from a per-process cache (issue 7). These
// tests change rows behind the service's back to see the cache, then change them through the API
// to see every audited change drop it.
describe.each(testDatabases())('per-process tenant cache on $name', (testDatabase) => {
  let service: AllInOne
  let auth: { authorization: string }
  let root: { authorization: string }
  const tenant = `cache-${crypto.randomUUID().slice(0, 8)}`

  const inject = (method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: unknown) =>
    service.app.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) })
  const metadataIds = async () =>
    Object.keys(
      (await service.app.inject({ url: `/.well-known/openid-credential-issuer/issuers/${tenant}` })).json()
        .credential_configurations_supported,
    ).sort()
  const jwksKids = async () =>
    ((await service.app.inject({ url: `/issuers/${tenant}/jwks` })).json().keys as { kid: string }[])
      .map((key) => key.kid)
      .sort()
  const config = (id: string, description = 'first') => ({
    id,
    description,
    config: { format: 'dc+sd-jwt', vct: `urn:cache:${id}` },
    keyChainId: 'keys',
    fields: [{ path: ['name'], type: 'string' }],
  })

  beforeAll(async () => {
    // Seeded over HTTP on purpose (no world): changes through the API must reach the cache.
    service = await startAllInOne(testDatabase)
    root = await bearer(service.app, service.rootClientId, service.rootSecret)
    auth = root
    await inject('POST', '/api/tenants', { id: tenant, name: tenant })
    const client = (
      await inject('POST', `/api/tenants/${tenant}/clients`, { roles: ['key:manage', 'issuance:config'] })
    ).json()
    auth = await bearer(service.app, client.clientId, client.clientSecret)
    expect((await inject('POST', '/api/key-chains', { source: 'generate', id: 'keys' })).statusCode).toBe(201)
    expect((await inject('POST', '/api/key-chains', { source: 'generate', id: 'spare' })).statusCode).toBe(
      201,
    )
    for (const id of ['a', 'b'])
      expect((await inject('POST', '/api/credentials', config(id))).statusCode).toBe(201)
  })
  afterAll(() => service.app.close())

  it('configurations are served from the cache until an audited change of the tenant drops it', async () => {
    expect(await metadataIds()).toStrictEqual(['a', 'b'])
    await service.database.db.execute(
      sql`delete from credential_configs where tenant_id = ${tenant} and id = 'b'`,
    )
    expect(await metadataIds(), 'a row deleted behind the cache is still served').toStrictEqual(['a', 'b'])

    expect((await inject('PUT', '/api/credentials/a', config('a', 'second'))).statusCode).toBe(200)
    expect(await metadataIds(), 'the audited change re-reads the tenant').toStrictEqual(['a'])
  })

  it('key chains (JWKS, signers) are cached alike and dropped by an audited key chain change', async () => {
    const before = await jwksKids()
    expect(before).toHaveLength(2)
    await service.database.db.execute(
      sql`delete from key_chains where tenant_id = ${tenant} and id = 'spare'`,
    )
    expect(await jwksKids()).toStrictEqual(before)

    expect((await inject('PATCH', '/api/key-chains/keys', { description: 'changed' })).statusCode).toBe(200)
    expect(await jwksKids()).toHaveLength(1)
  })

  it('login providers are cached alike: a holder login reads none per request (issue 44)', async () => {
    const cache = createTenantCache({ db: service.database.db })
    await service.database.db.execute(
      sql`insert into login_providers (tenant_id, id, kind, issuer, client_id, scopes)
          values (${tenant}, 'op', 'openid', 'https://op.example', 'wallet', '{openid}')`,
    )
    expect(await cache.loginProvider(tenant, 'op')).toMatchObject({ id: 'op', clientId: 'wallet' })
    await service.database.db.execute(
      sql`delete from login_providers where tenant_id = ${tenant} and id = 'op'`,
    )
    expect(await cache.loginProvider(tenant, 'op'), 'deleted behind the cache').toMatchObject({ id: 'op' })
    // What every audited change does, in this process and (by NOTIFY) in all others.
    tenantChanged(tenant)
    expect(await cache.loginProvider(tenant, 'op')).toBeUndefined()
  })

  it('a deleted tenant stops being served at once (its issuer answers 404)', async () => {
    const metadata = `/.well-known/openid-credential-issuer/issuers/${tenant}`
    expect((await service.app.inject({ url: metadata })).statusCode).toBe(200)
    const deleted = await service.app.inject({
      method: 'DELETE',
      url: `/api/tenants/${tenant}`,
      headers: root,
    })
    expect(deleted.statusCode).toBe(204)
    expect((await service.app.inject({ url: metadata })).statusCode).toBe(404)
    expect((await service.app.inject({ url: `/issuers/${tenant}/jwks` })).statusCode).toBe(404)
  })

  it('a tenant created again under the same id gets a new request encryption key, not the cached one (OID4VCI §10)', async () => {
    const metadata = `/.well-known/openid-credential-issuer/issuers/${tenant}`
    const kid = async () =>
      (await service.app.inject({ url: metadata })).json().credential_request_encryption.jwks.keys[0].kid
    /** The tenant created (again) with a client, a key chain and one configuration. */
    const create = async () => {
      auth = root
      expect((await inject('POST', '/api/tenants', { id: tenant, name: tenant })).statusCode).toBe(201)
      const roles = ['key:manage', 'issuance:config']
      const client = (await inject('POST', `/api/tenants/${tenant}/clients`, { roles })).json()
      auth = await bearer(service.app, client.clientId, client.clientSecret)
      expect((await inject('POST', '/api/key-chains', { source: 'generate', id: 'keys' })).statusCode).toBe(
        201,
      )
      expect((await inject('POST', '/api/credentials', config('a'))).statusCode).toBe(201)
    }
    await create()
    const first = await kid()
    expect(await kid(), 'the same key while the tenant lives').toBe(first)

    const deleted = await service.app.inject({
      method: 'DELETE',
      url: `/api/tenants/${tenant}`,
      headers: root,
    })
    expect(deleted.statusCode).toBe(204)
    await create()
    expect(await kid()).not.toBe(first)
  })
})
