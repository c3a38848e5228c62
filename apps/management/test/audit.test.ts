import { testDatabases } from '@credential-service/db-schema/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestClient } from './harness'

interface Event {
  id: string
  tenantId: string | null
  actorClientId: string
  action: string
  resourceType: string
  resourceId: string
  fields: string[]
  at: string
}

describe.each(testDatabases())('audit events on $name', (testDatabase) => {
  let h: Harness
  let adminA: TestClient
  let adminB: TestClient
  let since: string
  /** The client adminA updated, and the secret it was created with. */
  let edited: { clientId: string; clientSecret: string }
  let keyChainId: string

  const get = (url: string, client: { auth: Record<string, string> }) =>
    h.app.inject({ method: 'GET', url, headers: client.auth })

  /** Every event of a listing, page by page. */
  async function all(url: string, client: { auth: Record<string, string> }, limit = 100) {
    const events: Event[] = []
    let cursor: string | null = null
    do {
      const separator = url.includes('?') ? '&' : '?'
      const page = await get(
        `${url}${separator}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        client,
      )
      expect(page.statusCode, page.body).toBe(200)
      events.push(...page.json().items)
      cursor = page.json().nextCursor
    } while (cursor)
    return events
  }

  beforeAll(async () => {
    h = await createHarness(testDatabase)
    since = new Date(Date.now() - 1000).toISOString()
    adminA = await h.createClient(h.tenantA, ['tenant:admin', 'key:manage'])
    adminB = await h.createClient(h.tenantB, ['tenant:admin'])
    const created = await h.app.inject({
      method: 'POST',
      url: '/api/clients',
      headers: adminA.auth,
      payload: { roles: ['issuance:offer'], description: 'before' },
    })
    edited = created.json()
    await h.app.inject({
      method: 'PATCH',
      url: `/api/clients/${edited.clientId}`,
      headers: adminA.auth,
      payload: { description: 'after', allowedIssuanceConfigs: ['pid'] },
    })
    keyChainId = (
      await h.app.inject({
        method: 'POST',
        url: '/api/key-chains',
        headers: adminA.auth,
        payload: { source: 'generate' },
      })
    ).json().id
    await h.app.inject({ method: 'DELETE', url: `/api/key-chains/${keyChainId}`, headers: adminA.auth })
  }, 120_000)
  afterAll(() => h.close())

  it('S-101: a tenant admin reads its own tenant’s events only, newest first, without values or secrets', async () => {
    const events = await all('/api/audit-events', adminA)
    expect(events.every((event) => event.tenantId === h.tenantA)).toBe(true)
    const times = events.map((event) => event.at)
    expect(times).toStrictEqual([...times].sort().reverse())
    const update = events.find((event) => event.action === 'update' && event.resourceId === edited.clientId)
    expect(update).toStrictEqual({
      id: expect.stringMatching(/^aud_/),
      tenantId: h.tenantA,
      actorClientId: adminA.clientId,
      action: 'update',
      resourceType: 'client',
      resourceId: edited.clientId,
      fields: ['description', 'allowedIssuanceConfigs'],
      at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    })
    expect(events.map((event) => `${event.action} ${event.resourceType} ${event.resourceId}`)).toStrictEqual(
      expect.arrayContaining([
        `create tenant ${h.tenantA}`,
        `create client ${adminA.clientId}`,
        `create client ${edited.clientId}`,
        `create key-chain ${keyChainId}`,
        `delete key-chain ${keyChainId}`,
      ]),
    )
    // Neither the secret, nor the roles or values the changes set.
    const body = JSON.stringify(events)
    for (const value of [edited.clientSecret, 'issuance:offer', 'before', 'after', '"pid"'])
      expect(body).not.toContain(value)

    // The tenant path answers the same events.
    expect(await all(`/api/tenants/${h.tenantA}/audit-events`, adminA)).toStrictEqual(events)
    // Tenant B's admin never sees them.
    const ofB = await all('/api/audit-events', adminB)
    expect(ofB.length).toBeGreaterThan(0)
    expect(ofB.every((event) => event.tenantId === h.tenantB)).toBe(true)
  })

  it('S-100: another tenant’s audit is 404, by path or by tenantId', async () => {
    for (const url of [`/api/tenants/${h.tenantB}/audit-events`, `/api/audit-events?tenantId=${h.tenantB}`]) {
      const response = await get(url, adminA)
      expect(response.statusCode, url).toBe(404)
      expect(response.json().code).toBe('not_found')
    }
    expect((await get(`/api/audit-events?tenantId=${h.tenantA}`, adminA)).statusCode).toBe(200)
  })

  it('spec §5 rule 4: the audit needs tenant:admin (or tenant:manage); tenant:read and others are 403', async () => {
    const reader = await h.createClient(h.tenantA, ['tenant:read', 'issuance:offer', 'key:manage'])
    for (const url of ['/api/audit-events', `/api/tenants/${h.tenantA}/audit-events`]) {
      const response = await get(url, reader)
      expect(response.statusCode).toBe(403)
      expect(response.json().code).toBe('forbidden')
    }
  })

  it('operator view: every tenant and operator-level changes; tenantId narrows it to one', async () => {
    const operator = await h.createClient(null, ['tenant:manage'])
    const everything = await all(`/api/audit-events?since=${since}`, h.root)
    const tenantsSeen = new Set(everything.map((event) => event.tenantId))
    expect(tenantsSeen).toContain(h.tenantA)
    expect(tenantsSeen).toContain(h.tenantB)
    // Creating an operator client is a change of no tenant.
    expect(everything).toContainEqual(
      expect.objectContaining({ tenantId: null, resourceType: 'client', resourceId: operator.clientId }),
    )
    const onlyA = await all(`/api/audit-events?tenantId=${h.tenantA}`, h.root)
    expect(onlyA).toStrictEqual(await all('/api/audit-events', adminA))
    expect(await all(`/api/tenants/${h.tenantA}/audit-events`, h.root)).toStrictEqual(onlyA)
  })

  it('pagination: pages of 2 hold every event once, in the order of one big page; a foreign cursor is 400', async () => {
    const whole = await all('/api/audit-events', adminA)
    expect(whole.length).toBeGreaterThanOrEqual(6)
    const paged = await all('/api/audit-events', adminA, 2)
    expect(paged).toStrictEqual(whole)

    const first = (await get('/api/audit-events?limit=2', adminA)).json()
    expect(first.items).toHaveLength(2)
    for (const cursor of ['bm90LWEtY3Vyc29y', Buffer.from('["2024-01-01", "x"]').toString('base64url')]) {
      const response = await get(`/api/audit-events?cursor=${cursor}`, adminA)
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({
        code: 'invalid_input',
        errors: [{ path: 'query.cursor', message: expect.any(String) }],
      })
    }
  })

  it('filters: action, resourceType, resourceId, since (inclusive) and until (exclusive)', async () => {
    const updates = await all('/api/audit-events?action=update', adminA)
    expect(updates.length).toBeGreaterThan(0)
    expect(updates.every((event) => event.action === 'update')).toBe(true)
    const keyChains = await all('/api/audit-events?resourceType=key-chain', adminA)
    expect(keyChains.map((event) => `${event.action} ${event.resourceId}`)).toStrictEqual([
      `delete ${keyChainId}`,
      `create ${keyChainId}`,
    ])
    // Issue 42 item 3 (the session timeline): one resource's events by its id.
    const ofOne = await all(`/api/audit-events?resourceId=${encodeURIComponent(edited.clientId)}`, adminA)
    expect(ofOne.map((event) => `${event.action} ${event.resourceType}`)).toStrictEqual([
      'update client',
      'create client',
    ])
    const deletion = keyChains[0] as Event
    const from = await all(`/api/audit-events?since=${deletion.at}`, adminA)
    expect(from.map((event) => event.id)).toContain(deletion.id)
    const before = await all(`/api/audit-events?until=${deletion.at}`, adminA)
    expect(before.map((event) => event.id)).not.toContain(deletion.id)
    expect(before.map((event) => event.id)).toContain((keyChains[1] as Event).id)

    const bad = await get('/api/audit-events?action=read&since=yesterday', adminA)
    expect(bad.statusCode).toBe(400)
    expect(
      bad
        .json()
        .errors.map((issue: { path: string }) => issue.path)
        .sort(),
    ).toStrictEqual(['querystring.action', 'querystring.since'])
  })
})
