import { randomUUID } from 'node:crypto'
import { testDatabases } from '@credential-service/db-schema/testing'
import { decodeJwt, generateKeyPair, importJWK, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { random } from './harness'
import { type KeycloakStandIn, startKeycloakStandIn } from './oidc/keycloak-stand-in'
import { createOidcHarness, type OidcHarness } from './oidc/oidc-harness'

const PROBLEM = 'application/problem+json; charset=utf-8'
/** The admin console's public client (CONSOLE_OIDC_CLIENT_ID): its tokens are users' tokens. */
const CONSOLE = 'credential-service-console'

describe.each(testDatabases())('OIDC mode (spec §5.4) on $name', (testDatabase) => {
  let standIn: KeycloakStandIn
  let h: OidcHarness
  beforeAll(async () => {
    standIn = await startKeycloakStandIn()
    h = await createOidcHarness(testDatabase, standIn, { env: { CONSOLE_OIDC_CLIENT_ID: CONSOLE } })
  })
  afterAll(async () => {
    await h?.close()
    await standIn?.close()
  })

  /** A token signed with the provider's own key, with claims chosen by the test. */
  async function forged(claims: Record<string, unknown>, key = standIn.signingKey) {
    const now = Math.floor(Date.now() / 1000)
    return new SignJWT({
      client_id: h.root.clientId,
      roles: ['tenant:manage'],
      iss: standIn.issuer,
      aud: `${h.config.PUBLIC_URL}/api`,
      iat: now,
      exp: now + 300,
      ...claims,
    })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid as string, typ: 'at+jwt' })
      .sign(await importJWK(key, 'RS256'))
  }

  describe('happy', () => {
    it('spec §5.4: the root client is created in the provider at start, as an operator', async () => {
      const root = [...standIn.clients.values()].find((c) => c.clientId === h.root.clientId)
      expect(root).toMatchObject({ serviceAccountsEnabled: true, publicClient: false, enabled: true })
      const token = decodeJwt(h.root.auth.authorization.slice('Bearer '.length))
      expect(token).toMatchObject({
        iss: standIn.issuer,
        aud: 'https://issuer.test/api',
        client_id: h.root.clientId,
        roles: ['tenant:manage'],
      })
      expect(token.tenant_id).toBeUndefined()
    })

    it('spec §5.4: an operator token of the provider manages tenants', async () => {
      const id = random('tc')
      const created = await h.app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: h.root.auth,
        payload: { id, name: id },
      })
      expect(created.statusCode).toBe(201)
      const list = await h.app.inject({ url: '/api/tenants?limit=100', headers: h.root.auth })
      expect(list.statusCode).toBe(200)
    })

    it('spec §5.4: a client created through /api exists in the provider, and its secret gets a token carrying tenant and roles', async () => {
      const created = await h.app.inject({
        method: 'POST',
        url: `/api/tenants/${h.tenantA}/clients`,
        headers: h.root.auth,
        payload: { roles: ['issuance:offer', 'key:read'], allowedIssuanceConfigs: ['pid'] },
      })
      expect(created.statusCode).toBe(201)
      const body = created.json()
      const inProvider = [...standIn.clients.values()].find((c) => c.clientId === body.clientId)
      expect(inProvider?.secret).toBe(body.clientSecret) // the provider's secret, shown once
      const token = await h.providerToken(body.clientId, body.clientSecret)
      expect(decodeJwt(token)).toMatchObject({
        client_id: body.clientId,
        tenant_id: h.tenantA,
        roles: ['issuance:offer', 'key:read'],
        aud: 'https://issuer.test/api',
      })
      // The token acts on its tenant; the record keeps the allowed lists.
      const got = await h.app.inject({
        url: `/api/tenants/${h.tenantA}/key-chains`,
        headers: { authorization: `Bearer ${token}` },
      })
      expect(got.statusCode).toBe(200)
      const record = await h.app.inject({
        url: `/api/tenants/${h.tenantA}/clients/${body.clientId}`,
        headers: h.root.auth,
      })
      expect(record.json()).toMatchObject({ tenantId: h.tenantA, allowedIssuanceConfigs: ['pid'] })
    })

    it('spec §5.4: update changes the roles the provider puts in tokens; rotate replaces the secret; delete removes the client', async () => {
      const client = await h.createClient(h.tenantA, ['key:read'])
      const item = `/api/tenants/${h.tenantA}/clients/${client.clientId}`
      const patched = await h.app.inject({
        method: 'PATCH',
        url: item,
        headers: h.root.auth,
        payload: { roles: ['key:manage'] },
      })
      expect(patched.statusCode).toBe(200)
      expect(decodeJwt(await h.providerToken(client.clientId, client.clientSecret)).roles).toStrictEqual([
        'key:manage',
      ])

      const rotated = await h.app.inject({
        method: 'POST',
        url: `${item}/rotate-secret`,
        headers: h.root.auth,
      })
      expect(rotated.statusCode).toBe(200)
      const newSecret = rotated.json().clientSecret
      expect(newSecret).not.toBe(client.clientSecret)
      expect((await standIn.token(client.clientId, client.clientSecret)).body.error).toBe('invalid_client')
      const fresh = await h.providerToken(client.clientId, newSecret)

      const deleted = await h.app.inject({ method: 'DELETE', url: item, headers: h.root.auth })
      expect(deleted.statusCode).toBe(204)
      expect([...standIn.clients.values()].some((c) => c.clientId === client.clientId)).toBe(false)
      expect((await standIn.token(client.clientId, newSecret)).body.error).toBe('invalid_client')
      // S-108 in OIDC mode: a token of a deleted client is refused at once.
      const refused = await h.app.inject({
        url: `/api/tenants/${h.tenantA}/key-chains`,
        headers: { authorization: `Bearer ${fresh}` },
      })
      expect(refused.statusCode).toBe(401)
    })

    it('spec §5.4: the Swagger UI authorizes at the provider token endpoint', async () => {
      const doc = await h.app.inject({ url: '/api/docs-json' })
      expect(doc.json().components.securitySchemes.oauth2.flows.clientCredentials.tokenUrl).toBe(
        `${standIn.issuer}/protocol/openid-connect/token`,
      )
      const ui = await h.app.inject({ url: '/api/docs/json' })
      expect(ui.json().components.securitySchemes.oauth2.flows.clientCredentials.tokenUrl).toBe(
        `${standIn.issuer}/protocol/openid-connect/token`,
      )
    })
  })

  describe('error', () => {
    it('spec §5.4: /api/oauth2/token is not served; the problem names the provider token endpoint', async () => {
      for (const [payload, type] of [
        [
          JSON.stringify({
            grant_type: 'client_credentials',
            client_id: h.root.clientId,
            client_secret: h.root.clientSecret,
          }),
          'application/json',
        ],
        [`grant_type=client_credentials&client_id=${h.root.clientId}`, 'application/x-www-form-urlencoded'],
      ]) {
        const response = await h.app.inject({
          method: 'POST',
          url: '/api/oauth2/token',
          payload,
          headers: { 'content-type': type as string },
        })
        expect(response.statusCode).toBe(404)
        expect(response.headers['content-type']).toBe(PROBLEM)
        expect(response.json()).toMatchObject({
          status: 404,
          code: 'not_found',
          detail: expect.stringContaining(`${standIn.issuer}/protocol/openid-connect/token`),
        })
      }
      expect((await h.app.inject({ url: '/api/oauth2/jwks' })).statusCode).toBe(404)
      const doc = await h.app.inject({ url: '/api/docs-json' })
      expect(Object.keys(doc.json().paths)).not.toContain('/api/oauth2/token')
    })

    it('a duplicate client id is a 409 and leaves the provider as it was', async () => {
      const clientId = random('dup')
      const first = await h.app.inject({
        method: 'POST',
        url: `/api/tenants/${h.tenantA}/clients`,
        headers: h.root.auth,
        payload: { clientId, roles: ['key:read'] },
      })
      expect(first.statusCode).toBe(201)
      const again = await h.app.inject({
        method: 'POST',
        url: `/api/tenants/${h.tenantB}/clients`,
        headers: h.root.auth,
        payload: { clientId, roles: ['key:read'] },
      })
      expect(again.statusCode).toBe(409)
      const inProvider = [...standIn.clients.values()].filter((c) => c.clientId === clientId)
      expect(inProvider).toHaveLength(1)
      expect(decodeJwt(await h.providerToken(clientId, first.json().clientSecret)).tenant_id).toBe(h.tenantA)
    })

    it('a client id the provider already has (its own admin client) is a 409 and creates no record', async () => {
      const response = await h.app.inject({
        method: 'POST',
        url: `/api/tenants/${h.tenantA}/clients`,
        headers: h.root.auth,
        payload: { clientId: standIn.adminClientId, roles: ['key:read'] },
      })
      expect(response.statusCode).toBe(409)
      expect(response.headers['content-type']).toBe(PROBLEM)
      const record = await h.app.inject({
        url: `/api/tenants/${h.tenantA}/clients/${standIn.adminClientId}`,
        headers: h.root.auth,
      })
      expect(record.statusCode).toBe(404)
    })
  })

  describe('security', () => {
    const expectInvalidToken = (response: {
      statusCode: number
      headers: Record<string, unknown>
      json(): unknown
    }) => {
      expect(response.statusCode).toBe(401)
      expect(response.headers['content-type']).toBe(PROBLEM)
      expect(response.headers['www-authenticate']).toBe(
        'Bearer realm="credential-service", error="invalid_token"',
      )
      expect(response.json()).toMatchObject({ status: 401, code: 'unauthenticated' })
    }
    const tenants = (token: string) =>
      h.app.inject({ url: '/api/tenants', headers: { authorization: `Bearer ${token}` } })

    it('S-108: a token signed by the provider key but naming another issuer is refused', async () => {
      expect((await tenants(await forged({}))).statusCode).toBe(200) // the forging itself is sound
      const other = await new SignJWT({ client_id: h.root.clientId, roles: ['tenant:manage'] })
        .setProtectedHeader({ alg: 'RS256', kid: standIn.signingKey.kid as string })
        .setIssuer('https://other-issuer.test/realms/test')
        .setAudience(`${h.config.PUBLIC_URL}/api`)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(await importJWK(standIn.signingKey, 'RS256'))
      expectInvalidToken(await tenants(other))
    })

    it('S-108: a provider token for another audience (resource indicator) is refused', async () => {
      const token = await h.providerToken(h.root.clientId, h.root.clientSecret, {
        resource: 'https://other.test/api',
      })
      expect(decodeJwt(token).aud).toBe('https://other.test/api')
      expectInvalidToken(await tenants(token))
    })

    it('S-108: an expired provider token is refused', async () => {
      const now = Math.floor(Date.now() / 1000)
      expectInvalidToken(await tenants(await forged({ iat: now - 600, exp: now - 300 })))
    })

    it('S-108: a token signed by a key the provider does not publish is refused', async () => {
      const { privateKey } = await generateKeyPair('RS256', { extractable: true })
      const token = await new SignJWT({ client_id: h.root.clientId, roles: ['tenant:manage'] })
        .setProtectedHeader({ alg: 'RS256', kid: 'not-published' })
        .setIssuer(standIn.issuer)
        .setAudience(`${h.config.PUBLIC_URL}/api`)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey)
      expectInvalidToken(await tenants(token))
      // Same kid as the provider's key, other key material: the signature fails.
      const sameKid = await new SignJWT({ client_id: h.root.clientId, roles: ['tenant:manage'] })
        .setProtectedHeader({ alg: 'RS256', kid: standIn.signingKey.kid as string })
        .setIssuer(standIn.issuer)
        .setAudience(`${h.config.PUBLIC_URL}/api`)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey)
      expectInvalidToken(await tenants(sameKid))
    })

    it('S-108: alg none and HS256 tokens are refused', async () => {
      const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(
        JSON.stringify({
          iss: standIn.issuer,
          aud: 'https://issuer.test/api',
          client_id: 'x',
          roles: ['tenant:manage'],
        }),
      ).toString('base64url')}.`
      expectInvalidToken(await tenants(none))
      const hs = await new SignJWT({ client_id: h.root.clientId, roles: ['tenant:manage'] })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(standIn.issuer)
        .setAudience(`${h.config.PUBLIC_URL}/api`)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(new TextEncoder().encode(standIn.adminClientSecret))
      expectInvalidToken(await tenants(hs))
    })

    it('spec §5 roles: only the eleven spec roles count; a token without one is refused with 403', async () => {
      const client = await h.createClient(h.tenantA, ['key:read'])
      // The provider adds roles the service does not know (as Keycloak adds offline_access …).
      const token = await forged({
        client_id: client.clientId,
        tenant_id: h.tenantA,
        roles: ['offline_access', 'tenant:read'],
      })
      const tenant = await h.app.inject({
        url: `/api/tenants/${h.tenantA}`,
        headers: { authorization: `Bearer ${token}` },
      })
      expect(tenant.statusCode).toBe(200)
      const keys = await h.app.inject({
        url: `/api/tenants/${h.tenantA}/key-chains`,
        headers: { authorization: `Bearer ${token}` },
      })
      expect(keys.statusCode).toBe(403)
      const none = await forged({
        client_id: client.clientId,
        tenant_id: h.tenantA,
        roles: ['offline_access'],
      })
      const refused = await h.app.inject({
        url: `/api/tenants/${h.tenantA}`,
        headers: { authorization: `Bearer ${none}` },
      })
      expect(refused.statusCode).toBe(403)
      expect(refused.json()).toMatchObject({ code: 'forbidden' })
      const missing = await forged({ client_id: client.clientId, tenant_id: h.tenantA, roles: undefined })
      expect(
        (
          await h.app.inject({
            url: `/api/tenants/${h.tenantA}`,
            headers: { authorization: `Bearer ${missing}` },
          })
        ).statusCode,
      ).toBe(403)
    })

    it('spec §5 rule 3: a token naming a tenant with tenant:manage, or no tenant without it, is refused', async () => {
      expectInvalidToken(await tenants(await forged({ tenant_id: h.tenantA })))
      expectInvalidToken(await tenants(await forged({ roles: ['tenant:read'] })))
    })

    it('a tenant token acts on its own tenant only', async () => {
      const client = await h.createClient(h.tenantA, ['tenant:admin', 'tenant:read'])
      const own = await h.app.inject({ url: '/api/clients', headers: client.auth })
      expect(own.statusCode).toBe(200)
      expect(own.json().items.every((c: { tenantId: string }) => c.tenantId === h.tenantA)).toBe(true)
      const other = await h.app.inject({ url: `/api/tenants/${h.tenantB}/clients`, headers: client.auth })
      expect(other.statusCode).toBe(404)
      const list = await h.app.inject({ url: '/api/tenants', headers: client.auth })
      expect(list.json().items.map((t: { id: string }) => t.id)).toStrictEqual([h.tenantA])
      const create = await h.app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: client.auth,
        payload: { name: 'x' },
      })
      expect(create.statusCode).toBe(403)
    })

    it('S-108: tokens of a deleted tenant are refused, and do not come back when it is created again', async () => {
      const id = random('tdel')
      expect(
        (
          await h.app.inject({
            method: 'POST',
            url: '/api/tenants',
            headers: h.root.auth,
            payload: { id, name: id },
          })
        ).statusCode,
      ).toBe(201)
      const clientId = random('kept')
      const created = await h.app.inject({
        method: 'POST',
        url: `/api/tenants/${id}/clients`,
        headers: h.root.auth,
        payload: { clientId, roles: ['tenant:read'] },
      })
      const token = await h.providerToken(clientId, created.json().clientSecret)
      const auth = { authorization: `Bearer ${token}` }
      expect((await h.app.inject({ url: `/api/tenants/${id}`, headers: auth })).statusCode).toBe(200)

      expect(
        (await h.app.inject({ method: 'DELETE', url: `/api/tenants/${id}`, headers: h.root.auth }))
          .statusCode,
      ).toBe(204)
      // Its clients are gone from the provider too.
      expect([...standIn.clients.values()].some((c) => c.clientId === clientId)).toBe(false)
      expectInvalidToken(await h.app.inject({ url: `/api/tenants/${id}`, headers: auth }))

      // Created again, with a client of the same id: the old token stays refused (issued before).
      await h.app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: h.root.auth,
        payload: { id, name: id },
      })
      const stale = await forged({
        client_id: clientId,
        tenant_id: id,
        roles: ['tenant:read'],
        iat: Math.floor(Date.now() / 1000) - 120,
      })
      await h.app.inject({
        method: 'POST',
        url: `/api/tenants/${id}/clients`,
        headers: h.root.auth,
        payload: { clientId, roles: ['tenant:read'] },
      })
      expectInvalidToken(
        await h.app.inject({ url: `/api/tenants/${id}`, headers: { authorization: `Bearer ${stale}` } }),
      )
    })

    it("checklist S-108: a console user's token acts on the tenant it names, and another tenant's route reads as not found", async () => {
      // What Keycloak issues to a user of the console's client whose `tenant_id` attribute and
      // roles are mapped into the token (docs/oidc-mode.md).
      const token = await forged({
        client_id: CONSOLE,
        azp: CONSOLE,
        sub: randomUUID(),
        preferred_username: 'tara',
        tenant_id: h.tenantA,
        roles: ['tenant:admin', 'key:manage'],
      })
      const auth = { authorization: `Bearer ${token}` }
      const own = await h.app.inject({ url: `/api/tenants/${h.tenantA}/key-chains`, headers: auth })
      expect(own.statusCode).toBe(200)
      expect((await h.app.inject({ url: '/api/key-chains', headers: auth })).statusCode).toBe(200)
      const clients = await h.app.inject({ url: '/api/clients', headers: auth })
      expect(clients.statusCode).toBe(200)
      expect(clients.json().items.every((c: { tenantId: string }) => c.tenantId === h.tenantA)).toBe(true)

      const other = await h.app.inject({ url: `/api/tenants/${h.tenantB}/key-chains`, headers: auth })
      expect(other.statusCode).toBe(404)
      expect(other.json()).toMatchObject({ code: 'not_found' })
      // Roles still decide: no tenant:manage, so no tenant is created.
      const create = await h.app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: auth,
        payload: { name: 'x' },
      })
      expect(create.statusCode).toBe(403)
    })

    it("checklist S-108: a console user's token of a deleted tenant is refused, and does not come back when it is created again", async () => {
      const id = random('tcon')
      const createTenant = () =>
        h.app.inject({ method: 'POST', url: '/api/tenants', headers: h.root.auth, payload: { id, name: id } })
      expect((await createTenant()).statusCode).toBe(201)
      const user = { client_id: CONSOLE, tenant_id: id, roles: ['tenant:read'] }
      const auth = { authorization: `Bearer ${await forged(user)}` }
      expect((await h.app.inject({ url: `/api/tenants/${id}`, headers: auth })).statusCode).toBe(200)

      expect(
        (await h.app.inject({ method: 'DELETE', url: `/api/tenants/${id}`, headers: h.root.auth }))
          .statusCode,
      ).toBe(204)
      expectInvalidToken(await h.app.inject({ url: `/api/tenants/${id}`, headers: auth }))

      expect((await createTenant()).statusCode).toBe(201)
      const stale = await forged({ ...user, iat: Math.floor(Date.now() / 1000) - 120 })
      expectInvalidToken(
        await h.app.inject({ url: `/api/tenants/${id}`, headers: { authorization: `Bearer ${stale}` } }),
      )
      const fresh = await forged(user)
      expect(
        (await h.app.inject({ url: `/api/tenants/${id}`, headers: { authorization: `Bearer ${fresh}` } }))
          .statusCode,
      ).toBe(200)
    })

    it("spec §5 rule 3, checklist S-108: a console user's token naming a tenant with tenant:manage, or a tenant that does not exist, is refused", async () => {
      expectInvalidToken(
        await tenants(await forged({ client_id: CONSOLE, tenant_id: h.tenantA, roles: ['tenant:manage'] })),
      )
      expectInvalidToken(
        await tenants(
          await forged({ client_id: CONSOLE, tenant_id: random('none'), roles: ['tenant:read'] }),
        ),
      )
      // Another public client naming a tenant is still refused.
      expectInvalidToken(
        await tenants(
          await forged({ client_id: `${CONSOLE}-copy`, tenant_id: h.tenantA, roles: ['tenant:read'] }),
        ),
      )
    })

    it('a token of a provider client the service never created is refused for a tenant', async () => {
      const token = await forged({ client_id: 'made-by-hand', tenant_id: h.tenantA, roles: ['tenant:read'] })
      expectInvalidToken(
        await h.app.inject({
          url: `/api/tenants/${h.tenantA}`,
          headers: { authorization: `Bearer ${token}` },
        }),
      )
    })
  })
})
