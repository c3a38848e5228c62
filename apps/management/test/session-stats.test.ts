import { testDatabases } from '@credential-service/db-schema/testing'
import { startWorld, type World } from '@credential-service/management/testing'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const PROBLEM = /^application\/problem\+json/

// routes/sessions.ts GET …/session-stats (issue 42 item 3, the console's dashboard): counts from
// the sessions tables, per configuration, tenant-scoped, on both databases.
describe.each(testDatabases())('management /api/session-stats on $name', (testDatabase) => {
  let world: World
  const offered: string[] = []
  let requested: string

  const offer = async () => {
    const response = await world.app.inject({
      method: 'POST',
      url: '/api/offers',
      headers: world.tenants.a.auth,
      payload: { credentialConfigurationIds: ['pid'], claims: { pid: { given_name: 'Erika' } } },
    })
    expect(response.statusCode, response.body).toBe(201)
    return response.json().sessionId as string
  }

  beforeAll(async () => {
    world = await startWorld('presentation', { testDatabase })
    for (let i = 0; i < 4; i++) offered.push(await offer())
    const request = await world.app.inject({
      method: 'POST',
      url: '/api/presentation-requests',
      headers: world.tenants.a.auth,
      payload: { presentationConfigId: 'ask' },
    })
    requested = request.json().sessionId
    // The states a wallet would bring the sessions to, set in the rows: one issued, one failed, one
    // expired unused, one created two days ago (outside the window); the request verified.
    const { db } = world.database
    const tenant = world.tenants.a.id
    const [issued, failed, expired, old] = offered
    await db.execute(sql`update issuance_sessions set status = 'completed', issued_configuration_ids = '{pid}'
      where tenant_id = ${tenant} and id = ${issued}`)
    await db.execute(
      sql`update issuance_sessions set status = 'failed' where tenant_id = ${tenant} and id = ${failed}`,
    )
    await db.execute(sql`update issuance_sessions set expires_at = now() - interval '1 minute'
      where tenant_id = ${tenant} and id = ${expired}`)
    await db.execute(sql`update issuance_sessions set created_at = now() - interval '2 days'
      where tenant_id = ${tenant} and id = ${old}`)
    await db.execute(sql`update presentation_sessions set status = 'verified'
      where tenant_id = ${tenant} and id = ${requested}`)
  })
  afterAll(() => world?.close())

  const stats = (url: string, auth = world.tenants.a.auth) => world.app.inject({ url, headers: auth })

  it('counts the last 24 hours per configuration: offered, issued, failed, expired; verified', async () => {
    const response = await stats('/api/session-stats')
    expect(response.statusCode, response.body).toBe(200)
    const body = response.json()
    expect(body.issuance).toStrictEqual([
      { credentialConfigurationId: 'pid', offered: 3, issued: 1, failed: 1, expired: 1 },
    ])
    expect(body.presentation).toStrictEqual([
      { presentationConfigId: 'ask', requested: 1, verified: 1, failed: 0, expired: 0 },
    ])
    expect(Date.parse(body.until) - Date.parse(body.since)).toBe(24 * 60 * 60 * 1000)
  })

  it('since: a wider window counts the older offer; the tenant path answers the same', async () => {
    const since = new Date(Date.now() - 3 * 24 * 60 * 60 * 1000).toISOString()
    const response = await stats(`/api/tenants/${world.tenants.a.id}/session-stats?since=${since}`)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json().issuance[0]).toMatchObject({ offered: 4 })
    expect(response.json().since).toBe(since)
  })

  it('a window over 31 days back, or a since that is no timestamp, is 400 problem+json', async () => {
    const since = new Date(Date.now() - 40 * 24 * 60 * 60 * 1000).toISOString()
    for (const query of [`since=${since}`, 'since=yesterday']) {
      const response = await stats(`/api/session-stats?${query}`)
      expect(response.statusCode, query).toBe(400)
      expect(response.headers['content-type']).toMatch(PROBLEM)
    }
  })

  it('a client counts only the kinds its roles cover', async () => {
    const created = await world.app.inject({
      method: 'POST',
      url: `/api/tenants/${world.tenants.a.id}/clients`,
      headers: world.root,
      payload: { roles: ['presentation:request'] },
    })
    expect(created.statusCode, created.body).toBe(201)
    const { clientId, clientSecret } = created.json()
    const token = await world.app.inject({
      method: 'POST',
      url: '/api/oauth2/token',
      payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
    })
    const auth = { authorization: `Bearer ${token.json().access_token}` }
    const body = (await stats('/api/session-stats', auth)).json()
    expect(body.issuance).toBeUndefined()
    expect(body.presentation).toHaveLength(1)
  })

  it("tenant B counts none of tenant A's sessions and is refused A's path", async () => {
    const { b } = world.tenants
    const own = await stats('/api/session-stats', b.auth)
    expect(own.json()).toMatchObject({ issuance: [], presentation: [] })
    const underA = await stats(`/api/tenants/${world.tenants.a.id}/session-stats`, b.auth)
    expect([403, 404]).toContain(underA.statusCode)
    expect(underA.headers['content-type']).toMatch(PROBLEM)
  })
})
