import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startIssuerWorld, type World } from './world'

// routes/jwks.ts: the tenant's signing keys, for wallets and verifiers.
describe('issuer GET /issuers/{tenant}/jwks and /.well-known/jwt-vc-issuer', () => {
  let world: World
  beforeAll(async () => {
    world = await startIssuerWorld()
  })
  afterAll(() => world.close())

  describe('happy', () => {
    it('lists the public keys of the tenant, cacheable for a minute', async () => {
      const response = await world.app.inject({ url: `/issuers/${world.tenants.a.id}/jwks` })
      expect(response.statusCode).toBe(200)
      expect(response.headers['cache-control']).toBe('public, max-age=60')
      const { keys } = response.json()
      expect(keys).toHaveLength(world.tenants.a.keyChains.length)
      for (const key of keys) expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', kid: expect.any(String) })
    })

    it('SD-JWT VC §5: the JWT VC issuer metadata names the issuer and carries the same keys', async () => {
      const { a } = world.tenants
      const jwks = (await world.app.inject({ url: `/issuers/${a.id}/jwks` })).json()
      const response = await world.app.inject({ url: `/.well-known/jwt-vc-issuer/issuers/${a.id}` })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toStrictEqual({ issuer: a.issuer, jwks })
    })
  })

  describe('error', () => {
    it('an unknown tenant is 404 at both paths', async () => {
      for (const url of ['/issuers/nobody-here/jwks', '/.well-known/jwt-vc-issuer/issuers/nobody-here']) {
        const response = await world.app.inject({ url })
        expect(response.statusCode).toBe(404)
        expect(response.headers['cache-control']).toBe('no-store')
        expect(response.json()).toMatchObject({ error: 'not_found' })
      }
    })

    it('a tenant id that is no tenant id is refused before any lookup', async () => {
      const response = await world.app.inject({ url: '/issuers/NOT_A_TENANT!/jwks' })
      expect(response.statusCode).toBe(400)
    })
  })

  describe('security', () => {
    it('never shows a private key member, and tenant B lists none of tenant A keys', async () => {
      const keysOf = async (tenant: string) =>
        (await world.app.inject({ url: `/issuers/${tenant}/jwks` })).json().keys as Record<string, unknown>[]
      const a = await keysOf(world.tenants.a.id)
      const b = await keysOf(world.tenants.b.id)
      for (const key of [...a, ...b]) expect(Object.keys(key)).not.toContain('d')
      const kids = new Set(a.map((key) => key.kid))
      expect(b.filter((key) => kids.has(key.kid) || a.some((k) => k.x === key.x))).toStrictEqual([])
    })
  })
})
