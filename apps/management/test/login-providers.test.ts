import { testDatabases } from '@credential-service/db-schema/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, type TestClient } from './harness'

const provider = (id: string) => ({
  id,
  issuer: 'https://login.example.com/realms/holders',
  clientId: 'issuer',
  clientSecret: 'a-client-secret-value',
  scopes: ['profile'],
})

const staff = (id: string, keyChainId: string, loginProviderId: string, claims: Record<string, string>) => ({
  id,
  config: { format: 'dc+sd-jwt', vct: `urn:example:${id}` },
  keyChainId,
  fields: [{ path: ['given_name'], type: 'string', mandatory: true, disclosable: true }],
  userAuthentication: { loginProviderId, claims },
})

describe.each(testDatabases())('login providers (OpenID4VCI §5 holder login) on $name', (testDatabase) => {
  let h: Harness
  let admin: TestClient
  let keyChainId: string

  beforeAll(async () => {
    h = await createHarness(testDatabase)
    admin = await h.createClient(h.tenantA, ['issuance:config', 'key:manage'])
    keyChainId = (
      await h.app.inject({
        method: 'POST',
        url: '/api/key-chains',
        headers: admin.auth,
        payload: { source: 'generate' },
      })
    ).json().id
  })
  afterAll(() => h.close())

  const send = (method: 'POST' | 'PUT', url: string, payload: unknown, client = admin) =>
    h.app.inject({ method, url, headers: client.auth, payload: payload as object })

  it('happy: the client secret is stored encrypted and never returned; a replace without one keeps it', async () => {
    const id = random('idp')
    const created = await send('POST', `/api/tenants/${h.tenantA}/login-providers`, provider(id))
    expect(created.statusCode).toBe(201)
    expect(created.json()).toStrictEqual({
      id,
      description: null,
      issuer: 'https://login.example.com/realms/holders',
      clientId: 'issuer',
      scopes: ['profile'],
      hasClientSecret: true,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    const { clientSecret: _s, ...withoutSecret } = provider(id)
    const replaced = await send('PUT', `/api/login-providers/${id}`, {
      ...withoutSecret,
      clientId: 'issuer-2',
    })
    expect(replaced.statusCode).toBe(200)
    expect(replaced.json().hasClientSecret).toBe(true)
    expect(
      JSON.stringify((await h.app.inject({ url: '/api/login-providers', headers: admin.auth })).json()),
    ).not.toContain('a-client-secret-value')
  })

  it('happy: a credential configuration names its login provider and claim mapping', async () => {
    const idp = random('idp')
    await send('POST', '/api/login-providers', provider(idp))
    const id = random('staff')
    const created = await send(
      'POST',
      '/api/credentials',
      staff(id, keyChainId, idp, { given_name: 'given_name' }),
    )
    expect(created.statusCode).toBe(201)
    expect(created.json().userAuthentication).toStrictEqual({
      loginProviderId: idp,
      claims: { given_name: 'given_name' },
    })
    // A referenced login provider cannot be deleted.
    const deleted = await h.app.inject({
      method: 'DELETE',
      url: `/api/login-providers/${idp}`,
      headers: admin.auth,
    })
    expect(deleted.statusCode).toBe(409)
  })

  it('error: an unknown login provider or a claim mapping key that is no field path is a 422 naming the field', async () => {
    const idp = random('idp')
    await send('POST', '/api/login-providers', provider(idp))
    const missing = await send('POST', '/api/credentials', staff(random('s'), keyChainId, 'nope', {}))
    expect(missing.statusCode).toBe(422)
    expect(missing.json().errors.map((e: { path: string }) => e.path)).toContain(
      'body.userAuthentication.loginProviderId',
    )
    const typo = await send(
      'POST',
      '/api/credentials',
      staff(random('s'), keyChainId, idp, { givenname: 'given_name' }),
    )
    expect(typo.statusCode).toBe(422)
    expect(typo.json().errors.map((e: { path: string }) => e.path)).toContain(
      'body.userAuthentication.claims.givenname',
    )
    const internal = await send('POST', '/api/login-providers', {
      ...provider(random('idp')),
      issuer: 'https://10.0.0.1/',
    })
    expect(internal.statusCode).toBe(422)
  })

  it('security: another tenant cannot read, replace, delete or reference a login provider (404 / 422); issuance:offer alone is 403', async () => {
    const idp = random('idp')
    await send('POST', '/api/login-providers', provider(idp))
    const intruder = await h.createClient(h.tenantB, ['issuance:config', 'key:manage'])
    for (const attempt of [
      { method: 'GET', url: `/api/login-providers/${idp}` },
      { method: 'PUT', url: `/api/login-providers/${idp}`, payload: provider(idp) },
      { method: 'DELETE', url: `/api/login-providers/${idp}` },
    ] as const) {
      const response = await h.app.inject({ ...attempt, headers: intruder.auth })
      expect(response.statusCode, `${attempt.method} ${attempt.url}`).toBe(
        attempt.method === 'PUT' ? 404 : 404,
      )
    }
    const otherKeys = (
      await h.app.inject({
        method: 'POST',
        url: '/api/key-chains',
        headers: intruder.auth,
        payload: { source: 'generate' },
      })
    ).json().id
    const foreign = await send('POST', '/api/credentials', staff(random('s'), otherKeys, idp, {}), intruder)
    expect(foreign.statusCode).toBe(422)
    const offerOnly = await h.createClient(h.tenantA, ['issuance:offer'])
    expect((await h.app.inject({ url: '/api/login-providers', headers: offerOnly.auth })).statusCode).toBe(
      403,
    )
  })
})
