import { queryRows, testDatabases } from '@credential-service/db-schema/testing'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, random, type TestClient } from './harness'

const jwtServer = (id: string, issuer = `https://as.example.com/${id}`) => ({
  id,
  issuer,
  credentialConfigurationIds: ['pid'],
})

const introspecting = (id: string) => ({
  ...jwtServer(id),
  tokenCheck: 'introspection',
  clientId: 'credential-issuer',
  clientSecret: 'an-introspection-secret',
})

/** Issue 41: external authorization servers (OpenID4VCI 1.0 §12.2.4) through the management API. */
describe.each(testDatabases())('external authorization servers on $name', (testDatabase) => {
  let h: Harness
  let admin: TestClient
  let otherAdmin: TestClient

  beforeAll(async () => {
    h = await createHarness(testDatabase)
    admin = await h.createClient(h.tenantA, ['issuance:config', 'key:manage'])
    otherAdmin = await h.createClient(h.tenantB, ['issuance:config'])
    const keyChainId = (
      await h.app.inject({
        method: 'POST',
        url: '/api/key-chains',
        headers: admin.auth,
        payload: { source: 'generate' },
      })
    ).json().id
    const pid = await h.app.inject({
      method: 'POST',
      url: '/api/credentials',
      headers: admin.auth,
      payload: {
        id: 'pid',
        config: { format: 'dc+sd-jwt', vct: 'urn:example:pid' },
        keyChainId,
        fields: [{ path: ['given_name'], type: 'string', disclosable: true }],
      },
    })
    expect(pid.statusCode, pid.body).toBe(201)
  })
  afterAll(() => h.close())

  const send = (method: 'POST' | 'PUT', url: string, payload: unknown, client = admin) =>
    h.app.inject({ method, url, headers: client.auth, payload: payload as object })

  async function storedSecret(id: string): Promise<string | null> {
    const [row] = await queryRows<{ client_secret_encrypted: string | null }>(
      h.database.db,
      sql`select client_secret_encrypted from auth_servers where tenant_id = ${h.tenantA} and id = ${id}`,
    )
    if (!row?.client_secret_encrypted) return null
    return h.keys.cipher.decrypt(row.client_secret_encrypted, `auth-server:${h.tenantA}/${id}`)
  }

  it('happy: defaults, the introspection secret stored encrypted and never returned, kept on a replace with the same issuer and clientId', async () => {
    const id = random('as')
    const created = await send('POST', '/api/auth-servers', jwtServer(id))
    expect(created.statusCode, created.body).toBe(201)
    expect(created.json()).toStrictEqual({
      id,
      description: null,
      issuer: `https://as.example.com/${id}`,
      tokenCheck: 'jwt',
      clientId: null,
      credentialConfigurationIds: ['pid'],
      mapping: ['authorization_details', 'scope'],
      claimsSource: 'token',
      singleUseTokens: false,
      hasClientSecret: false,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    const bank = random('bank')
    expect((await send('POST', '/api/auth-servers', introspecting(bank))).json().hasClientSecret).toBe(true)
    const { clientSecret: _s, ...withoutSecret } = introspecting(bank)
    const replaced = await send('PUT', `/api/auth-servers/${bank}`, {
      ...withoutSecret,
      singleUseTokens: true,
    })
    expect(replaced.statusCode, replaced.body).toBe(200)
    expect(replaced.json()).toMatchObject({ hasClientSecret: true, singleUseTokens: true })
    expect(await storedSecret(bank)).toBe('an-introspection-secret')
    expect(
      JSON.stringify((await h.app.inject({ url: '/api/auth-servers', headers: admin.auth })).json()),
    ).not.toContain('an-introspection-secret')
  })

  it('error: unknown configuration, a second server with the same issuer, introspection without clientId, a changed issuer keeping the old secret, an http issuer: 4xx naming the field', async () => {
    const id = random('as')
    const unknown = await send('POST', '/api/auth-servers', {
      ...jwtServer(id),
      credentialConfigurationIds: ['pid', 'nope'],
    })
    expect(unknown.statusCode).toBe(422)
    expect(unknown.json().errors).toStrictEqual([
      expect.objectContaining({ path: 'body.credentialConfigurationIds.1' }),
    ])
    expect(
      (await send('POST', '/api/auth-servers', jwtServer(id, 'https://same.example.com'))).statusCode,
    ).toBe(201)
    const twin = await send(
      'POST',
      '/api/auth-servers',
      jwtServer(random('twin'), 'https://same.example.com'),
    )
    expect(twin.statusCode).toBe(422)
    expect(twin.json().errors).toStrictEqual([expect.objectContaining({ path: 'body.issuer' })])
    const noClient = await send('POST', '/api/auth-servers', {
      ...jwtServer(random('as')),
      tokenCheck: 'introspection',
    })
    expect(noClient.statusCode).toBe(400)
    expect(noClient.json().errors).toStrictEqual([expect.objectContaining({ path: 'body.clientId' })])
    const bank = random('bank')
    await send('POST', '/api/auth-servers', introspecting(bank))
    const { clientSecret: _s, ...withoutSecret } = introspecting(bank)
    const moved = await send('PUT', `/api/auth-servers/${bank}`, {
      ...withoutSecret,
      issuer: 'https://elsewhere.example.com',
    })
    expect(moved.statusCode).toBe(422)
    expect(moved.json().errors).toStrictEqual([expect.objectContaining({ path: 'body.clientSecret' })])
    const http = await send('POST', '/api/auth-servers', jwtServer(random('as'), 'http://as.example.com'))
    expect(http.statusCode).toBe(422)
    expect(http.json().errors).toStrictEqual([expect.objectContaining({ path: 'body.issuer' })])
  })

  it('security: another tenant reads and deletes none of them (404)', async () => {
    const id = random('as')
    await send('POST', '/api/auth-servers', jwtServer(id))
    expect(
      (await h.app.inject({ url: `/api/auth-servers/${id}`, headers: otherAdmin.auth })).statusCode,
    ).toBe(404)
    expect(
      (await h.app.inject({ method: 'DELETE', url: `/api/auth-servers/${id}`, headers: otherAdmin.auth }))
        .statusCode,
    ).toBe(404)
    expect((await h.app.inject({ url: `/api/auth-servers/${id}`, headers: admin.auth })).statusCode).toBe(200)
  })
})
