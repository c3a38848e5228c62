import { bearer, type World } from '@credential-service/management/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readyToRequest, requestCredential, startIssuerWorld } from '../../issuer/test/world'

const PROBLEM = /^application\/problem\+json/

// routes/credential-status.ts: revoke, suspend, reinstate (draft-ietf-oauth-status-list §7.1) and
// the tenant's status lists, over the `issuance` world, whose `pid-status` configuration has status
// management. The issuer beside it issues the credentials the routes change; the published list
// and what a relying party reads from it are checked by apps/all-in-one/test/status-list.test.ts.
describe('management credential status and status lists', () => {
  let world: World
  type Headers = Record<string, string>
  /** Clients of tenant A holding only `key:manage`, and only `issuance:config`. */
  let keysOnly: Headers
  let configOnly: Headers

  /** A `pid-status` credential issued to tenant `tenant`'s wallet: the offer's session. */
  async function issued(tenant: 'a' | 'b' = 'a', offerExtra: object = {}) {
    const { accessToken, body, offer } = await readyToRequest(world, tenant, 'pid-status', 1, offerExtra)
    const response = await requestCredential(world, world.tenants[tenant].id, accessToken, body)
    expect(response.statusCode, response.body).toBe(200)
    return offer.sessionId
  }
  const post = (url: string, payload: object, headers: Headers = world.tenants.a.auth) =>
    world.management.inject({ method: 'POST', url, headers, payload })
  const get = (url: string, headers: Headers = world.tenants.a.auth) =>
    world.management.inject({ url, headers })
  const handle = () => `order-${crypto.randomUUID()}`

  beforeAll(async () => {
    world = await startIssuerWorld()
    const client = async (roles: string[]) => {
      const created = await world.management.inject({
        method: 'POST',
        url: `/api/tenants/${world.tenants.a.id}/clients`,
        headers: world.root,
        payload: { roles },
      })
      expect(created.statusCode, created.body).toBe(201)
      return bearer(world.management, created.json().clientId, created.json().clientSecret)
    }
    ;[keysOnly, configOnly] = await Promise.all([client(['key:manage']), client(['issuance:config'])])
  })
  afterAll(() => world.close())

  describe('happy', () => {
    it('draft-ietf-oauth-status-list §7.1: a session’s credentials are suspended and reinstated; a repeat changes nothing', async () => {
      const sessionId = await issued()
      const url = `/api/sessions/${sessionId}/status`
      const suspended = await post(url, { status: 'suspended' })
      expect(suspended.statusCode, suspended.body).toBe(200)
      expect(suspended.json()).toStrictEqual({ status: 'suspended', credentials: 1, changed: 1 })
      expect((await post(url, { status: 'suspended' })).json()).toStrictEqual({
        status: 'suspended',
        credentials: 1,
        changed: 0,
      })
      const reinstated = await post(`/api/tenants/${world.tenants.a.id}/sessions/${sessionId}/status`, {
        status: 'valid',
      })
      expect(reinstated.statusCode, reinstated.body).toBe(200)
      expect(reinstated.json()).toStrictEqual({ status: 'valid', credentials: 1, changed: 1 })
    })

    it('the credentials of a status handle are revoked by handle, under either mount', async () => {
      const statusHandle = handle()
      await issued('a', { statusHandle })
      await issued('a', { statusHandle })
      const revoked = await post('/api/credential-status', { handle: statusHandle, status: 'revoked' })
      expect(revoked.statusCode, revoked.body).toBe(200)
      expect(revoked.json()).toStrictEqual({ status: 'revoked', credentials: 2, changed: 2 })
      const again = await post(`/api/tenants/${world.tenants.a.id}/credential-status`, {
        handle: statusHandle,
        status: 'revoked',
      })
      expect(again.json()).toStrictEqual({ status: 'revoked', credentials: 2, changed: 0 })
    })

    it('the tenant’s status lists are listed, filtered by key chain and read one by one', async () => {
      await issued()
      const page = await get('/api/status-lists')
      expect(page.statusCode, page.body).toBe(200)
      const [list] = page.json().items
      expect(list).toMatchObject({
        id: expect.any(String),
        keyChainId: 'pid-keys',
        bits: expect.any(Number),
        allocated: expect.any(Number),
      })
      expect(list.uri).toBe(`${world.tenants.a.issuer}/status-lists/${list.id}`)
      expect(list.allocated).toBeGreaterThan(0)
      const one = await get(`/api/tenants/${world.tenants.a.id}/status-lists/${list.id}`)
      expect(one.statusCode, one.body).toBe(200)
      expect(one.json()).toMatchObject({ id: list.id, uri: list.uri, keyChainId: 'pid-keys' })
      expect((await get('/api/status-lists?keyChainId=pid-keys')).json().items).toContainEqual(
        expect.objectContaining({ id: list.id }),
      )
      expect((await get('/api/status-lists?keyChainId=no-such-chain')).json().items).toStrictEqual([])
    })
  })

  describe('error', () => {
    it('RFC 9457: an unknown status or an extra field is a 400 naming the field', async () => {
      const sessionId = await issued()
      const unknown = await post(`/api/sessions/${sessionId}/status`, { status: 'deleted' })
      expect(unknown.statusCode).toBe(400)
      expect(unknown.headers['content-type']).toMatch(PROBLEM)
      expect(unknown.json()).toMatchObject({
        code: 'invalid_input',
        errors: [expect.objectContaining({ path: 'body.status' })],
      })
      const extra = await post('/api/credential-status', { handle: 'h', status: 'revoked', reason: 'x' })
      expect(extra.statusCode).toBe(400)
      expect(extra.json().code).toBe('invalid_input')
      expect(extra.json().errors.length).toBeGreaterThan(0)
      const spaces = await post('/api/credential-status', { handle: 'has spaces', status: 'revoked' })
      expect(spaces.statusCode).toBe(400)
      expect(spaces.json().errors).toContainEqual(expect.objectContaining({ path: 'body.handle' }))
    })

    it('draft-ietf-oauth-status-list §7.1: revocation is final; reinstating or suspending a revoked credential is 409', async () => {
      const sessionId = await issued()
      const url = `/api/sessions/${sessionId}/status`
      expect((await post(url, { status: 'revoked' })).statusCode).toBe(200)
      for (const status of ['valid', 'suspended']) {
        const refused = await post(url, { status })
        expect(refused.statusCode, status).toBe(409)
        expect(refused.json().code).toBe('conflict')
      }
    })

    it('a session that issued no credential with a status entry is 409; unknown sessions, handles and lists are 404', async () => {
      const offer = await post('/api/offers', {
        credentialConfigurationIds: ['pid-status'],
        claims: { 'pid-status': { given_name: 'Erika' } },
      })
      expect(offer.statusCode, offer.body).toBe(201)
      const nothingIssued = await post(`/api/sessions/${offer.json().sessionId}/status`, {
        status: 'revoked',
      })
      expect(nothingIssued.statusCode).toBe(409)
      expect(nothingIssued.json().code).toBe('conflict')
      for (const response of [
        await post('/api/sessions/ses_unknown0000/status', { status: 'revoked' }),
        await post('/api/credential-status', { handle: handle(), status: 'revoked' }),
        await get('/api/status-lists/no-such-list'),
      ]) {
        expect(response.statusCode, response.body).toBe(404)
        expect(response.json().code).toBe('not_found')
      }
    })
  })

  describe('security', () => {
    it('spec §5 rule 4: changing a status needs issuance:offer; reading lists needs issuance:offer or issuance:config', async () => {
      const sessionId = await issued()
      for (const headers of [keysOnly, configOnly]) {
        for (const response of [
          await post(`/api/sessions/${sessionId}/status`, { status: 'revoked' }, headers),
          await post('/api/credential-status', { handle: 'h', status: 'revoked' }, headers),
        ]) {
          expect(response.statusCode).toBe(403)
          expect(response.json().code).toBe('forbidden')
        }
      }
      expect((await get('/api/status-lists', keysOnly)).statusCode).toBe(403)
      expect((await get('/api/status-lists', configOnly)).statusCode).toBe(200)
      // Refused changes changed nothing: the credential is still valid, so suspending changes it.
      expect((await post(`/api/sessions/${sessionId}/status`, { status: 'suspended' })).json().changed).toBe(
        1,
      )
    })

    it('S-100: tenant B cannot change or see tenant A’s credentials and lists (404); they stay unchanged', async () => {
      const { a, b } = world.tenants
      const statusHandle = handle()
      const sessionId = await issued('a', { statusHandle })
      for (const response of [
        await post(`/api/sessions/${sessionId}/status`, { status: 'revoked' }, b.auth),
        await post('/api/credential-status', { handle: statusHandle, status: 'revoked' }, b.auth),
        await post(
          `/api/tenants/${a.id}/credential-status`,
          { handle: statusHandle, status: 'revoked' },
          b.auth,
        ),
        await post(`/api/tenants/${a.id}/sessions/${sessionId}/status`, { status: 'revoked' }, b.auth),
      ])
        expect(response.statusCode, response.body).toBe(404)
      const listOfA = (await get('/api/status-lists')).json().items[0].id as string
      expect((await get(`/api/status-lists/${listOfA}`, b.auth)).statusCode).toBe(404)
      expect((await get(`/api/tenants/${a.id}/status-lists`, b.auth)).statusCode).toBe(404)
      expect((await get('/api/status-lists', b.auth)).json().items).not.toContainEqual(
        expect.objectContaining({ id: listOfA }),
      )
      // Not revoked by B: A can still suspend it.
      const suspended = await post('/api/credential-status', { handle: statusHandle, status: 'suspended' })
      expect(suspended.json()).toStrictEqual({ status: 'suspended', credentials: 1, changed: 1 })
    })
  })
})
