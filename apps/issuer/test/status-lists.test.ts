import { decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readyToRequest, requestCredential, startIssuerWorld, type World } from './world'

// routes/status-lists.ts: the Status List Token (draft-ietf-oauth-status-list §8.1, F-32), the
// issuer served alone over the `issuance` world, whose `pid-status` configuration has status
// management. Revocation itself is checked by apps/all-in-one/test/status-list.test.ts.
describe('issuer GET /issuers/{tenant}/status-lists/{id}', () => {
  let world: World
  /** The status list entry of a credential tenant A issued. */
  let entry: { idx: number; uri: string }
  beforeAll(async () => {
    world = await startIssuerWorld()
    const { accessToken, body } = await readyToRequest(world, 'a', 'pid-status')
    const issued = await requestCredential(world, world.tenants.a.id, accessToken, body)
    const credential = issued.json().credentials[0].credential as string
    entry = (decodeJwt(credential.split('~')[0] as string) as { status: { status_list: typeof entry } })
      .status.status_list
  })
  afterAll(() => world.close())

  const path = () => new URL(entry.uri).pathname

  describe('happy', () => {
    it('§8.1: the issued credential names a list of its issuer, served as a signed statuslist+jwt', async () => {
      expect(entry.uri.startsWith(`${world.tenants.a.issuer}/status-lists/`)).toBe(true)
      const response = await world.app.inject({ url: path() })
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toBe('application/statuslist+jwt')
      expect(response.headers['access-control-allow-origin']).toBe('*')
      expect(response.headers['cache-control']).toMatch(/^public, max-age=\d+$/)
      expect(decodeProtectedHeader(response.body)).toMatchObject({ typ: 'statuslist+jwt' })
      expect(decodeJwt(response.body)).toMatchObject({
        sub: entry.uri,
        status_list: { bits: expect.any(Number), lst: expect.any(String) },
      })
    })

    it('§8.1: If-None-Match with the ETag is 304', async () => {
      const first = await world.app.inject({ url: path() })
      const again = await world.app.inject({
        url: path(),
        headers: { 'if-none-match': first.headers.etag as string },
      })
      expect(again.statusCode).toBe(304)
    })
  })

  describe('error', () => {
    it('an unknown list, or a list of an unknown tenant, is 404', async () => {
      const unknown = await world.app.inject({
        url: `/issuers/${world.tenants.a.id}/status-lists/no-such-list`,
      })
      expect(unknown.statusCode).toBe(404)
      expect(unknown.json()).toMatchObject({ error: 'not_found' })
      const listId = path().split('/').at(-1)
      expect(
        (await world.app.inject({ url: `/issuers/nobody-here/status-lists/${listId}` })).statusCode,
      ).toBe(404)
    })
  })

  describe('security', () => {
    it("tenant B does not serve tenant A's status list", async () => {
      const asB = path().replace(`/issuers/${world.tenants.a.id}/`, `/issuers/${world.tenants.b.id}/`)
      const response = await world.app.inject({ url: asB })
      expect(response.statusCode).toBe(404)
    })
  })
})
