import { startWorld, type World } from '@credential-service/management/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const PROBLEM = /^application\/problem\+json/

// routes/sessions.ts: list, get and delete sessions, and release a same-device result, the
// management API alone over the `presentation` world. The sessions' life through the wallet
// endpoints is checked by apps/all-in-one/test/sessions.test.ts.
describe('management /api/sessions', () => {
  let world: World
  let offered: string
  let requested: string
  beforeAll(async () => {
    world = await startWorld('presentation')
    const auth = world.tenants.a.auth
    const offer = await world.app.inject({
      method: 'POST',
      url: '/api/offers',
      headers: auth,
      payload: { credentialConfigurationIds: ['pid'], claims: { pid: { given_name: 'Erika' } } },
    })
    offered = offer.json().sessionId
    const request = await world.app.inject({
      method: 'POST',
      url: '/api/presentation-requests',
      headers: auth,
      payload: { presentationConfigId: 'ask' },
    })
    requested = request.json().sessionId
  })
  afterAll(() => world.close())

  const get = (id: string, auth = world.tenants.a.auth) =>
    world.app.inject({ url: `/api/sessions/${id}`, headers: auth })

  describe('happy', () => {
    it('lists both kinds, newest first, without claims', async () => {
      const response = await world.app.inject({
        url: '/api/sessions?limit=10',
        headers: world.tenants.a.auth,
      })
      expect(response.statusCode).toBe(200)
      const { items } = response.json()
      expect(items.map((item: { id: string }) => item.id)).toStrictEqual([requested, offered])
      expect(items.map((item: { kind: string }) => item.kind)).toStrictEqual(['presentation', 'issuance'])
      for (const item of items) expect(item.claims ?? null).toBeNull()
    })

    it('gets one session with its status, under the token tenant and under its path', async () => {
      const response = await get(offered)
      expect(response.statusCode).toBe(200)
      expect(response.json()).toMatchObject({ id: offered, kind: 'issuance', status: 'offered' })
      const underPath = await world.app.inject({
        url: `/api/tenants/${world.tenants.a.id}/sessions/${offered}`,
        headers: world.tenants.a.auth,
      })
      expect(underPath.statusCode).toBe(200)
    })
  })

  describe('error', () => {
    it('an unknown session is 404 problem+json; no token is 401', async () => {
      const unknown = await get('ses_unknown')
      expect(unknown.statusCode).toBe(404)
      expect(unknown.headers['content-type']).toMatch(PROBLEM)
      expect((await world.app.inject({ url: `/api/sessions/${offered}` })).statusCode).toBe(401)
    })

    it('OpenID4VP §8.2: releasing the result of a session that was given no response code is 409', async () => {
      const response = await world.app.inject({
        method: 'POST',
        url: `/api/sessions/${requested}/result`,
        headers: world.tenants.a.auth,
        payload: { responseCode: 'not-a-code' },
      })
      expect(response.statusCode).toBe(409)
      expect(response.headers['content-type']).toMatch(PROBLEM)
    })
  })

  describe('security', () => {
    it("tenant B neither lists, reads nor deletes tenant A's sessions", async () => {
      const { b } = world.tenants
      const list = await world.app.inject({ url: '/api/sessions', headers: b.auth })
      expect(list.json().items).toStrictEqual([])
      expect((await get(offered, b.auth)).statusCode).toBe(404)
      const underAPath = await world.app.inject({
        url: `/api/tenants/${world.tenants.a.id}/sessions/${offered}`,
        headers: b.auth,
      })
      expect([403, 404]).toContain(underAPath.statusCode)
      const deleted = await world.app.inject({
        method: 'DELETE',
        url: `/api/sessions/${offered}`,
        headers: b.auth,
      })
      expect(deleted.statusCode).toBe(404)
      expect((await get(offered)).statusCode).toBe(200)
    })

    it('deleting a session ends it at once: 204, then 404', async () => {
      const deleted = await world.app.inject({
        method: 'DELETE',
        url: `/api/sessions/${requested}`,
        headers: world.tenants.a.auth,
      })
      expect(deleted.statusCode).toBe(204)
      expect((await get(requested)).statusCode).toBe(404)
    })
  })
})
