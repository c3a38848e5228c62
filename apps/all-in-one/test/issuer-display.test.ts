import { createHash } from 'node:crypto'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAllInOne, tenantAdmin } from './harness'

/** The smallest PNG: a 1x1 transparent pixel. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
)
const SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><rect width="1" height="1"/></svg>',
)

/**
 * Issue 42 item 5: the issuer's `display` in its credential issuer metadata (OpenID4VCI 1.0
 * §12.2.4: "display: OPTIONAL. A non-empty array of objects, where each object contains display
 * properties of a Credential Issuer for a certain language"), set per locale by the tenant, with
 * logos uploaded to and served by the service.
 */
describe.each(testDatabases())('issuer display and logos on $name', (testDatabase: TestDatabase) => {
  let app: FastifyInstance
  const a = `ida-${crypto.randomUUID().slice(0, 8)}`
  const b = `idb-${crypto.randomUUID().slice(0, 8)}`
  let adminA: Record<string, string>
  let adminB: Record<string, string>

  beforeAll(async () => {
    const started = await startAllInOne(testDatabase, 'https://issuer.example')
    app = started.app
    adminA = (await tenantAdmin(app, started, a, ['tenant:admin'])).admin
    adminB = (await tenantAdmin(app, started, b, ['tenant:admin'])).admin
  })
  afterAll(() => app?.close())

  const metadataDisplay = async (tenant: string) => {
    const response = await app.inject({ url: `/.well-known/openid-credential-issuer/issuers/${tenant}` })
    expect(response.statusCode).toBe(200)
    return response.json().display
  }
  const patch = (tenant: string, headers: Record<string, string>, issuerDisplay: unknown) =>
    app.inject({ method: 'PATCH', url: `/api/tenants/${tenant}`, headers, payload: { issuerDisplay } })
  const upload = (tenant: string, headers: Record<string, string>, contentType: string, bytes: Buffer) =>
    app.inject({
      method: 'POST',
      url: `/api/tenants/${tenant}/logos`,
      headers,
      payload: { contentType, data: bytes.toString('base64') },
    })

  describe('happy', () => {
    it('OpenID4VCI 1.0 §12.2.4: without entries the display is the tenant name', async () => {
      expect(await metadataDisplay(a)).toStrictEqual([{ name: a }])
    })

    it('§12.2.4: a logo uploaded and set per locale is the metadata display, served content-addressed', async () => {
      const uploaded = await upload(a, adminA, 'image/png', PNG)
      expect(uploaded.statusCode, uploaded.body).toBe(201)
      const sha256 = createHash('sha256').update(PNG).digest('hex')
      expect(uploaded.json()).toStrictEqual({
        uri: `https://issuer.example/issuers/${a}/logos/${sha256}`,
        sha256,
        contentType: 'image/png',
        size: PNG.length,
      })
      const display = [
        {
          locale: 'en',
          name: 'ACME Issuing',
          logo: { uri: uploaded.json().uri, alt_text: 'ACME logo' },
          background_color: '#12107c',
          text_color: '#ffffff',
        },
        { locale: 'de-DE', name: 'ACME Ausgabe', logo: { uri: 'https://cdn.example/acme.png' } },
      ]
      const patched = await patch(a, adminA, display)
      expect(patched.statusCode, patched.body).toBe(200)
      expect(patched.json().issuerDisplay).toStrictEqual(display)
      expect(await metadataDisplay(a)).toStrictEqual(display)

      const served = await app.inject({ url: `/issuers/${a}/logos/${sha256}` })
      expect(served.statusCode).toBe(200)
      expect(served.rawPayload.equals(PNG)).toBe(true)
      expect(served.headers['content-type']).toBe('image/png')
      expect(served.headers['cache-control']).toBe('public, max-age=31536000, immutable')
      expect(served.headers['x-content-type-options']).toBe('nosniff')
      expect(served.headers.etag).toBe(`"${sha256}"`)
      const again = await app.inject({
        url: `/issuers/${a}/logos/${sha256}`,
        headers: { 'if-none-match': `"${sha256}"` },
      })
      expect(again.statusCode).toBe(304)
    })

    it('an SVG logo is served as an image that runs nothing (sandboxed, no script)', async () => {
      const uploaded = await upload(a, adminA, 'image/svg+xml', SVG)
      expect(uploaded.statusCode, uploaded.body).toBe(201)
      const served = await app.inject({ url: new URL(uploaded.json().uri).pathname })
      expect(served.headers['content-type']).toBe('image/svg+xml')
      expect(served.headers['content-security-policy']).toBe(
        "default-src 'none'; style-src 'unsafe-inline'; sandbox",
      )
    })

    it('null puts the tenant name back', async () => {
      expect((await patch(a, adminA, null)).statusCode).toBe(200)
      expect(await metadataDisplay(a)).toStrictEqual([{ name: a }])
    })
  })

  describe('error', () => {
    it('checklist I-10: two entries for one locale are refused at the second one', async () => {
      const response = await patch(a, adminA, [
        { locale: 'en', name: 'One' },
        { locale: 'EN', name: 'Two' },
      ])
      expect(response.statusCode).toBe(400)
      expect(response.json().errors).toStrictEqual([
        { path: 'body.issuerDisplay.1.locale', message: 'a second display entry for locale EN' },
      ])
    })

    it('a colour, a logo URL or a member the display does not know is refused', async () => {
      for (const entry of [
        { name: 'x', background_color: 'red' },
        { name: 'x', logo: { uri: 'javascript:alert(1)' } },
        { name: 'x', description: 'not an issuer display member' },
      ])
        expect((await patch(a, adminA, [entry])).statusCode, JSON.stringify(entry)).toBe(400)
    })

    it('a logo whose bytes are not its declared type, or over 256 KiB, is refused', async () => {
      const html = await upload(a, adminA, 'image/png', Buffer.from('<html><script>alert(1)</script></html>'))
      expect(html.statusCode).toBe(400)
      expect(html.json().errors).toStrictEqual([
        { path: 'body.data', message: 'the data is not a image/png image' },
      ])
      const big = Buffer.concat([PNG, Buffer.alloc(256 * 1024)])
      expect((await upload(a, adminA, 'image/png', big)).statusCode).toBe(400)
      expect((await upload(a, adminA, 'image/gif', PNG)).statusCode).toBe(400)
    })

    it('an unknown logo is a 404', async () => {
      expect((await app.inject({ url: `/issuers/${a}/logos/${'0'.repeat(64)}` })).statusCode).toBe(404)
    })
  })

  describe('security', () => {
    it('tenants never see each other’s logos: another tenant’s upload path and serving path are not found', async () => {
      expect((await upload(a, adminB, 'image/png', PNG)).statusCode).toBe(404)
      const sha256 = createHash('sha256').update(PNG).digest('hex')
      expect((await app.inject({ url: `/issuers/${b}/logos/${sha256}` })).statusCode).toBe(404)
    })
  })
})
