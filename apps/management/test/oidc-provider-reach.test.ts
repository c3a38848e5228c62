import { createServer } from 'node:net'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { testDatabases } from '@credential-service/db-schema/testing'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toInternalUrl } from '../src/oidc/provider-discovery'
import { type KeycloakStandIn, startKeycloakStandIn } from './oidc/keycloak-stand-in'
import { createOidcHarness, type OidcHarness } from './oidc/oidc-harness'

const PROBLEM = 'application/problem+json; charset=utf-8'

/** A local port with nothing listening: connections are refused. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('toInternalUrl', () => {
  it('moves URLs under the public issuer, or on its origin, to the internal issuer', () => {
    const pub = 'https://id.example.com/realms/acme'
    const internal = 'http://keycloak:8080/realms/acme'
    expect(toInternalUrl(`${pub}/protocol/openid-connect/certs`, pub, internal)).toBe(
      'http://keycloak:8080/realms/acme/protocol/openid-connect/certs',
    )
    expect(toInternalUrl('https://id.example.com/other/certs?x=1', pub, internal)).toBe(
      'http://keycloak:8080/other/certs?x=1',
    )
    expect(toInternalUrl('https://keys.example.net/certs', pub, internal)).toBe(
      'https://keys.example.net/certs',
    )
    expect(toInternalUrl(`${pub}/certs`, pub, pub)).toBe(`${pub}/certs`)
  })
})

describe.each(testDatabases())('OIDC provider reach on $name', (testDatabase) => {
  describe('OIDC_INTERNAL_ISSUER_URL (spec §5.4)', () => {
    let standIn: KeycloakStandIn
    let h: OidcHarness
    beforeAll(async () => {
      // Keycloak with a public hostname the service cannot resolve: it must use the internal URL.
      standIn = await startKeycloakStandIn({ publicIssuerOrigin: 'https://id.public.invalid' })
      h = await createOidcHarness(testDatabase, standIn)
    })
    afterAll(async () => {
      await h?.close()
      await standIn?.close()
    })

    it('fetches discovery and keys internally, and checks iss against the public issuer', async () => {
      const token = h.root.auth.authorization.slice('Bearer '.length)
      expect(decodeJwt(token).iss).toBe('https://id.public.invalid/realms/test')
      const list = await h.app.inject({ url: '/api/tenants', headers: h.root.auth })
      expect(list.statusCode).toBe(200)
      // Integrators and the Swagger UI get the public token endpoint.
      const doc = await h.app.inject({ url: '/api/docs-json' })
      expect(doc.json().components.securitySchemes.oauth2.flows.clientCredentials.tokenUrl).toBe(
        'https://id.public.invalid/realms/test/protocol/openid-connect/token',
      )
    })

    it('manages clients through the internal URL', async () => {
      const client = await h.createClient(h.tenantA, ['key:read'])
      const keys = await h.app.inject({ url: `/api/tenants/${h.tenantA}/key-chains`, headers: client.auth })
      expect(keys.statusCode).toBe(200)
    })
  })

  describe('provider unreachable', () => {
    let database: DatabaseHandle
    beforeAll(async () => {
      database = await testDatabase.open()
    })
    afterAll(() => database?.close())
    it('at start: the app starts, logs it, and answers 503 problems until the provider is back', {
      timeout: 30_000,
    }, async () => {
      const standIn = await startKeycloakStandIn()
      await standIn.stop()
      const h = await createOidcHarness(testDatabase, standIn, { seed: false, database })
      try {
        expect(h.logLines.join('\n')).toContain('root client could not be pushed to the identity provider')
        const response = await h.app.inject({
          url: '/api/tenants',
          headers: { authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln' },
        })
        expect(response.statusCode).toBe(503)
        expect(response.headers['content-type']).toBe(PROBLEM)
        expect(response.headers['retry-after']).toBe('10')
        expect(response.json()).toMatchObject({ status: 503, code: 'upstream_unavailable' })

        await standIn.restart()
        const judged = await h.app.inject({
          url: '/api/tenants',
          headers: { authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln' },
        })
        expect(judged.statusCode).toBe(401) // the provider answers again: the token itself is judged
        // The push is retried every 10 s: the root client arrives and its token works.
        const rootId = h.config.AUTH_CLIENT_ID as string
        await expect
          .poll(() => [...standIn.clients.values()].some((c) => c.clientId === rootId), {
            timeout: 15_000,
            interval: 250,
          })
          .toBe(true)
        const token = await h.providerToken(rootId, h.config.AUTH_CLIENT_SECRET as string)
        const listed = await h.app.inject({
          url: '/api/tenants',
          headers: { authorization: `Bearer ${token}` },
        })
        expect(listed.statusCode).toBe(200)
      } finally {
        await h.close()
        await standIn.close()
      }
    })

    it('during a request: creating a client answers 503 and leaves no record', async () => {
      const standIn = await startKeycloakStandIn()
      const h = await createOidcHarness(testDatabase, standIn, { database })
      try {
        await standIn.stop()
        const created = await h.app.inject({
          method: 'POST',
          url: `/api/tenants/${h.tenantA}/clients`,
          headers: h.root.auth, // keys are cached: the token is still verified
          payload: { clientId: 'during-outage', roles: ['key:read'] },
        })
        expect(created.statusCode).toBe(503)
        expect(created.headers['content-type']).toBe(PROBLEM)
        expect(created.json()).toMatchObject({ status: 503, code: 'upstream_unavailable' })
        const record = await h.app.inject({
          url: `/api/tenants/${h.tenantA}/clients/during-outage`,
          headers: h.root.auth,
        })
        expect(record.statusCode).toBe(404)
      } finally {
        await h.close()
        await standIn.close()
      }
    })

    it('an OIDC issuer with nothing listening: requests answer 503, not 500', async () => {
      const standIn = await startKeycloakStandIn()
      const port = await closedPort()
      const h = await createOidcHarness(
        testDatabase,
        {
          ...standIn,
          issuer: `http://127.0.0.1:${port}/realms/test`,
          internalIssuer: `http://127.0.0.1:${port}/realms/test`,
        },
        { seed: false, database },
      )
      try {
        const response = await h.app.inject({
          method: 'POST',
          url: '/api/tenants',
          headers: { authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln' },
          payload: { name: 'x' },
        })
        expect(response.statusCode).toBe(503)
        expect(response.json()).toMatchObject({ code: 'upstream_unavailable' })
      } finally {
        await h.close()
        await standIn.close()
      }
    })
  })
})
