import 'reflect-metadata'
import { webcrypto } from 'node:crypto'
import { X509Certificate, X509Crl } from '@peculiar/x509'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startIssuerWorld, type World } from './world'

// routes/crl.ts: the CRL of an internal-CA key chain (ISO 18013-5 B.1, RFC 5280 §5), the issuer
// served alone over the `issuance` world (whose key chain `pid-keys` has an internal CA). The CRL's
// content is checked in depth by apps/all-in-one/test/crl.test.ts.
describe('issuer GET /issuers/{tenant}/crl/{keyChainId}', () => {
  let world: World
  const roots: Record<'a' | 'b', X509Certificate> = {} as never
  beforeAll(async () => {
    world = await startIssuerWorld()
    for (const tenant of ['a', 'b'] as const) {
      const chain = await world.management.inject({
        url: '/api/key-chains/pid-keys',
        headers: world.tenants[tenant].auth,
      })
      roots[tenant] = new X509Certificate(chain.json().rootCertificate)
    }
  })
  afterAll(() => world.close())

  const crlOf = (tenant: 'a' | 'b', keyChainId = 'pid-keys', headers: Record<string, string> = {}) =>
    world.app.inject({ url: `/issuers/${world.tenants[tenant].id}/crl/${keyChainId}`, headers })

  describe('happy', () => {
    it('RFC 5280 §5: a CRL signed by the key chain root, cacheable, with an ETag', async () => {
      const response = await crlOf('a')
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toBe('application/pkix-crl')
      expect(response.headers['cache-control']).toMatch(/^public, max-age=\d+$/)
      expect(response.headers.etag).toMatch(/^"[\w-]+"$/)
      const crl = new X509Crl(new Uint8Array(response.rawPayload))
      expect(crl.issuer).toBe(roots.a.subject)
      expect(await crl.verify({ publicKey: roots.a.publicKey }, webcrypto)).toBe(true)
    })

    it('RFC 9110 §13.1.2: If-None-Match with the ETag is 304 without a body', async () => {
      const first = await crlOf('a')
      const again = await crlOf('a', 'pid-keys', { 'if-none-match': first.headers.etag as string })
      expect(again.statusCode).toBe(304)
      expect(again.body).toBe('')
    })
  })

  describe('error', () => {
    it('an unknown key chain, or one of an unknown tenant, has no CRL: 404', async () => {
      const unknown = await crlOf('a', 'no-such-chain')
      expect(unknown.statusCode).toBe(404)
      expect(unknown.json()).toMatchObject({ error: 'not_found' })
      expect((await world.app.inject({ url: '/issuers/nobody-here/crl/pid-keys' })).statusCode).toBe(404)
    })
  })

  describe('security', () => {
    it("tenant B's CRL of a key chain of the same id is signed by B's root, never A's", async () => {
      const crl = new X509Crl(new Uint8Array((await crlOf('b')).rawPayload))
      expect(await crl.verify({ publicKey: roots.b.publicKey }, webcrypto)).toBe(true)
      expect(await crl.verify({ publicKey: roots.a.publicKey }, webcrypto)).toBe(false)
    })
  })
})
