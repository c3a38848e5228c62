import { createSessionDataCipher } from '@credential-service/crypto'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { queryRows, TEST_MASTER_SECRET, testDatabases } from '@credential-service/db-schema/testing'
import type { WorldTenantHandle } from '@credential-service/management/testing'
import { sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, startAllInOneWorld } from './harness'
import { answer, issue, redeem, requestPresentation } from './session-fixtures'

type Headers = Record<string, string>
interface Listed {
  id: string
  kind: string
  status: string
  createdAt: string
  claims?: unknown
  notifications?: unknown
}

// Issue 14: issuance and presentation sessions as one collection (DESIGN.md "Management API shape").
describe.each(testDatabases())('sessions on $name', (testDatabase) => {
  let app: FastifyInstance
  let database: DatabaseHandle
  let root: Headers
  let a: WorldTenantHandle
  let b: WorldTenantHandle
  let clockOffset = 0
  let tenantA = ''
  /** Session ids of tenant A by what happened to them. */
  const ids: Record<'completed' | 'offered' | 'failed' | 'expired' | 'pending' | 'verified', string> = {
    completed: '',
    offered: '',
    failed: '',
    expired: '',
    pending: '',
    verified: '',
  }
  let ofB: string

  const offer = async (auth: Headers, extra: object = {}) => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/offers',
      headers: auth,
      payload: {
        credentialConfigurationIds: ['pid'],
        claims: { pid: { given_name: 'Erika', age_over_18: true } },
        byReference: false,
        ...extra,
      },
    })
    expect(response.statusCode, response.body).toBe(201)
    return response.json()
  }
  const token = (tenant: string, code: string, txCode?: string) =>
    app.inject({
      method: 'POST',
      url: `/issuers/${tenant}/token`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
        'pre-authorized_code': code,
        ...(txCode ? { tx_code: txCode } : {}),
      }).toString(),
    })
  const codeOf = (created: { credentialOffer: { grants: Record<string, Record<string, string>> } }) =>
    created.credentialOffer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']?.[
      'pre-authorized_code'
    ] as string
  const list = async (query: string, auth: Headers = a.auth) => {
    const response = await app.inject({ url: `/api/sessions?${query}`, headers: auth })
    expect(response.statusCode, response.body).toBe(200)
    return response.json() as { items: Listed[]; nextCursor: string | null }
  }
  /** The claims an offer's row holds, decrypted; null when they were dropped. */
  const claimsOf = async (tenant: string, id: string) => {
    const [row] = await queryRows<{ sealed: string | null; clear: unknown }>(
      database.db,
      sql`select claims_encrypted as sealed, claims as clear from issuance_sessions where tenant_id = ${tenant} and id = ${id}`,
    )
    expect(row?.clear).toBeNull()
    return row?.sealed ? createSessionDataCipher(TEST_MASTER_SECRET).openClaims(tenant, id, row.sealed) : null
  }

  beforeAll(async () => {
    const started = await startAllInOneWorld(
      testDatabase,
      'presentation',
      'https://credentials.example.com',
      {},
      () => new Date(Date.now() + clockOffset),
    )
    app = started.app
    database = started.database
    await app.ready()
    root = await bearer(app, started.rootClientId, started.rootSecret)
    a = started.tenants.a
    tenantA = a.id
    b = started.tenants.b

    // Created one after the other, so creation times differ and interleave the two kinds.
    ids.completed = (await issue(app, a.auth)).sessionId
    ids.pending = (await requestPresentation(app, a.auth)).created.sessionId
    ids.offered = (await offer(a.auth)).sessionId
    const locked = await offer(a.auth, { txCode: { value: '1234' } })
    for (let i = 0; i < 5; i++) await token(tenantA, codeOf(locked), '9999')
    ids.failed = locked.sessionId
    const presentation = await requestPresentation(app, a.auth)
    expect((await answer(app, presentation, await issue(app, a.auth))).statusCode).toBe(200)
    ids.verified = presentation.created.sessionId
    clockOffset = -120_000 // created two minutes ago with a one-minute lifetime
    try {
      ids.expired = (await offer(a.auth, { lifetimeSeconds: 60 })).sessionId
    } finally {
      clockOffset = 0
    }
    ofB = (await offer(b.auth)).sessionId
  }, 180_000)
  afterAll(() => app.close())

  it('issue 14: one list of both kinds, newest first, in one status vocabulary; no claims, no notifications', async () => {
    const { items, nextCursor } = await list('limit=100')
    expect(nextCursor).toBeNull()
    const byId = new Map(items.map((item) => [item.id, item]))
    // Tenant A also holds the sessions `issue` made for the verified presentation.
    for (const [status, id] of Object.entries(ids)) expect(byId.get(id)?.status, status).toBe(status)
    expect(byId.get(ids.pending)?.kind).toBe('presentation')
    expect(byId.get(ids.completed)?.kind).toBe('issuance')
    expect(items.map((item) => item.createdAt)).toStrictEqual(
      items
        .map((item) => item.createdAt)
        .sort()
        .reverse(),
    )
    expect(items.every((item) => item.claims === undefined || item.claims === null)).toBe(true)
    expect(items.every((item) => item.notifications === undefined)).toBe(true)
    expect(byId.get(ids.offered)).toStrictEqual({
      id: ids.offered,
      kind: 'issuance',
      status: 'offered',
      credentialConfigurationIds: ['pid'],
      issuedConfigurationIds: [],
      txCodeRequired: false,
      byReference: false,
      failureReason: null,
      createdByClientId: a.clientId,
      expiresAt: expect.any(String),
      offerFetchedAt: null,
      tokenIssuedAt: null,
      credentialIssuedAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    expect(byId.get(ids.verified)).toMatchObject({
      kind: 'presentation',
      claims: null,
      responseCodeRequired: false,
    })
  })

  it('issue 14: filters by kind, status (expired included), configuration and creation time', async () => {
    const idsOf = async (query: string) => (await list(`limit=100&${query}`)).items.map((item) => item.id)
    expect((await list('limit=100&kind=issuance')).items.every((item) => item.kind === 'issuance')).toBe(true)
    expect(await idsOf('kind=presentation')).toStrictEqual([ids.verified, ids.pending])
    expect(await idsOf('status=expired')).toStrictEqual([ids.expired])
    expect(await idsOf('status=offered')).toStrictEqual([ids.offered])
    expect(await idsOf('status=failed')).toStrictEqual([ids.failed])
    expect(await idsOf('status=verified')).toStrictEqual([ids.verified])
    expect(await idsOf('status=pending')).toStrictEqual([ids.pending])
    expect(await idsOf('kind=issuance&status=verified')).toStrictEqual([])
    expect(await idsOf('configId=ask')).toStrictEqual([ids.verified, ids.pending])
    expect(await idsOf('configId=pid&status=completed')).toContain(ids.completed)
    expect(await idsOf('configId=nothing')).toStrictEqual([])

    const all = (await list('limit=100')).items
    const pivot = all.find((item) => item.id === ids.offered) as Listed
    const after = await idsOf(`createdAfter=${pivot.createdAt}`)
    const before = await idsOf(`createdBefore=${pivot.createdAt}`)
    expect(after).toContain(ids.offered)
    expect(after).toContain(ids.expired)
    expect(before).not.toContain(ids.offered)
    expect(before).toContain(ids.completed)
    expect([...after, ...before].sort()).toStrictEqual(all.map((item) => item.id).sort())

    const bad = await app.inject({
      url: '/api/sessions?kind=both&status=done&createdAfter=yesterday&colour=red',
      headers: a.auth,
    })
    expect(bad.statusCode).toBe(400)
    expect(
      bad
        .json()
        .errors.map((issue: { path: string }) => issue.path)
        .sort(),
    ).toStrictEqual([
      'querystring.colour',
      'querystring.createdAfter',
      'querystring.kind',
      'querystring.status',
    ])
  })

  it('issue 14: pages of one walk both tables in the order of one big page; a foreign cursor is 400', async () => {
    const whole = (await list('limit=100')).items.map((item) => item.id)
    const walked: string[] = []
    let cursor: string | null = null
    do {
      const page = await list(`limit=1${cursor ? `&cursor=${cursor}` : ''}`)
      expect(page.items.length).toBe(1)
      walked.push(...page.items.map((item) => item.id))
      cursor = page.nextCursor
    } while (cursor)
    expect(walked).toStrictEqual(whole)
    const bad = await app.inject({ url: '/api/sessions?cursor=c2VzXzEyMw', headers: a.auth })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().errors[0].path).toBe('query.cursor')
  })

  it('S-101 / S-100: a tenant lists only its sessions; another tenant’s session is 404 to read and to delete', async () => {
    const ofA = (await list('limit=100')).items.map((item) => item.id)
    expect(ofA).not.toContain(ofB)
    expect((await list('limit=100', b.auth)).items.map((item) => item.id)).toStrictEqual([ofB])
    for (const method of ['GET', 'DELETE'] as const) {
      for (const url of [`/api/sessions/${ids.offered}`, `/api/tenants/${tenantA}/sessions/${ids.offered}`]) {
        const response = await app.inject({ method, url, headers: b.auth })
        expect(response.statusCode, `${method} ${url}`).toBe(404)
        expect(response.json().code).toBe('not_found')
      }
    }
    expect((await app.inject({ url: `/api/sessions/${ids.offered}`, headers: a.auth })).statusCode).toBe(200)
  })

  it('issue 20: a session read looks in the table of its kind first: one statement for a presentation session', async () => {
    // Statements the service sent for one read; the least of three, so a background job's
    // statement in between does not count.
    const statementsOf = async (id: string) => {
      const counts: number[] = []
      for (let n = 0; n < 3; n++) {
        const before = database.stats().statements
        const response = await app.inject({ url: `/api/sessions/${id}`, headers: a.auth })
        expect(response.statusCode).toBe(200)
        counts.push(database.stats().statements - before)
      }
      return Math.min(...counts)
    }
    expect(await statementsOf(ids.pending)).toBe(1)
    // An issuance session: the session and its notifications.
    expect(await statementsOf(ids.offered)).toBe(2)
  })

  it('spec §5 rule 4: a client sees and deletes only the kinds its roles cover', async () => {
    const client = async (roles: string[]) => {
      const created = (
        await app.inject({
          method: 'POST',
          url: `/api/tenants/${tenantA}/clients`,
          headers: root,
          payload: { roles },
        })
      ).json()
      return bearer(app, created.clientId, created.clientSecret)
    }
    const offers = await client(['issuance:offer'])
    const requests = await client(['presentation:request'])
    expect((await list('limit=100', offers)).items.every((item) => item.kind === 'issuance')).toBe(true)
    expect((await list('limit=100', requests)).items.map((item) => item.id)).toStrictEqual([
      ids.verified,
      ids.pending,
    ])
    for (const [auth, url, method] of [
      [offers, '/api/sessions?kind=presentation', 'GET'],
      [offers, `/api/sessions/${ids.pending}`, 'GET'],
      [offers, `/api/sessions/${ids.pending}`, 'DELETE'],
      [requests, `/api/sessions/${ids.offered}`, 'GET'],
      [requests, `/api/sessions/${ids.offered}`, 'DELETE'],
    ] as const) {
      const response = await app.inject({ method, url, headers: auth })
      expect(response.statusCode, `${method} ${url}`).toBe(403)
      expect(response.json().code).toBe('forbidden')
    }
    expect((await app.inject({ url: `/api/sessions/${ids.pending}`, headers: requests })).statusCode).toBe(
      200,
    )
  })

  it('issue 14: an offer’s claims are dropped once it completes or fails; a used-up offer issues nothing more', async () => {
    expect(await claimsOf(tenantA, ids.completed)).toBeNull()
    expect(await claimsOf(tenantA, ids.failed)).toBeNull()
    expect(await claimsOf(tenantA, ids.offered)).toStrictEqual({
      pid: { given_name: 'Erika', age_over_18: true },
    })

    const created = await offer(a.auth)
    const wallet = await redeem(app, created.credentialOffer)
    expect((await wallet.credential()).response.statusCode).toBe(200)
    expect(await claimsOf(tenantA, created.sessionId)).toBeNull()
    const again = (await wallet.credential()).response
    expect(again.statusCode).toBe(400)
    expect(again.json().error).toBe('credential_request_denied')
    // Refusing the extra request leaves the session completed.
    expect(
      (await app.inject({ url: `/api/sessions/${created.sessionId}`, headers: a.auth })).json().status,
    ).toBe('completed')
  })

  it('issue 14: the OpenAPI description lists the session and audit routes with their roles and the status vocabulary', async () => {
    const doc = (await app.inject({ url: '/api/docs-json' })).json()
    const routes = {
      'get /api/sessions': ['listSessions', ['issuance:offer', 'presentation:request']],
      'get /api/tenants/{tenantId}/sessions': [
        'listSessionsOfTenant',
        ['issuance:offer', 'presentation:request'],
      ],
      'get /api/sessions/{id}': ['getSession', ['issuance:offer', 'presentation:request']],
      'delete /api/sessions/{id}': ['deleteSession', ['issuance:offer', 'presentation:request']],
      'delete /api/tenants/{tenantId}/sessions/{id}': [
        'deleteSessionOfTenant',
        ['issuance:offer', 'presentation:request'],
      ],
      'post /api/sessions/{id}/result': ['releaseSessionResult', ['presentation:request']],
      'post /api/tenants/{tenantId}/sessions/{id}/result': [
        'releaseSessionResultOfTenant',
        ['presentation:request'],
      ],
      'get /api/audit-events': ['listAuditEvents', ['tenant:manage', 'tenant:admin']],
      'get /api/tenants/{tenantId}/audit-events': [
        'listAuditEventsOfTenant',
        ['tenant:manage', 'tenant:admin'],
      ],
    } as const
    for (const [route, [operationId, roles]] of Object.entries(routes)) {
      const [method, path] = route.split(' ') as [string, string]
      const operation = doc.paths[path]?.[method]
      expect(operation?.operationId, route).toBe(operationId)
      expect(operation.security, route).toStrictEqual([{ oauth2: roles }])
      expect(operation.description, route).toContain(
        `Roles (any of): ${roles.map((r) => `\`${r}\``).join(', ')}.`,
      )
    }
    const status = doc.paths['/api/sessions'].get.parameters.find(
      (p: { name: string }) => p.name === 'status',
    )
    expect(status.schema.enum).toStrictEqual([
      'offered',
      'token_issued',
      'credential_issued',
      'completed',
      'pending',
      'verified',
      'failed',
      'expired',
    ])
    expect(JSON.stringify(status)).toContain('Ended: `completed`, `verified`, `failed`, `expired`.')
  })

  it('issue 14: DELETE removes a session with its claims, result and notifications; an open offer stops working; audited', async () => {
    const issued = await issue(app, a.auth)
    const open = await offer(a.auth)
    const presentation = await requestPresentation(app, a.auth)
    expect((await answer(app, presentation, await issue(app, a.auth))).statusCode).toBe(200)
    const notifications = async (id: string) =>
      (
        await queryRows<{ n: number }>(
          database.db,
          sql`select count(*)::int as n from issuance_notifications where tenant_id = ${tenantA} and session_id = ${id}`,
        )
      )[0]?.n
    expect(await notifications(issued.sessionId)).toBe(1)

    for (const id of [issued.sessionId, open.sessionId, presentation.created.sessionId]) {
      const deleted = await app.inject({ method: 'DELETE', url: `/api/sessions/${id}`, headers: a.auth })
      expect(deleted.statusCode, deleted.body).toBe(204)
      expect(deleted.body).toBe('')
      expect((await app.inject({ url: `/api/sessions/${id}`, headers: a.auth })).statusCode).toBe(404)
      const twice = await app.inject({ method: 'DELETE', url: `/api/sessions/${id}`, headers: a.auth })
      expect(twice.statusCode).toBe(404)
    }
    expect(await notifications(issued.sessionId)).toBe(0)
    const rows = await queryRows<{ n: number }>(
      database.db,
      sql`select count(*)::int as n from presentation_sessions where tenant_id = ${tenantA} and id = ${presentation.created.sessionId}`,
    )
    expect(rows[0]?.n).toBe(0)
    const redeemed = await token(tenantA, codeOf(open))
    expect(redeemed.statusCode).toBe(400)
    expect(redeemed.json().error).toBe('invalid_grant')

    const audit = (
      await app.inject({
        url: `/api/audit-events?tenantId=${tenantA}&resourceType=session&limit=10`,
        headers: root,
      })
    ).json()
    expect(audit.items.map((event: { resourceId: string }) => event.resourceId)).toStrictEqual([
      presentation.created.sessionId,
      open.sessionId,
      issued.sessionId,
    ])
    expect(audit.items[0]).toStrictEqual({
      id: expect.any(String),
      tenantId: tenantA,
      actorClientId: a.clientId,
      action: 'delete',
      resourceType: 'session',
      resourceId: presentation.created.sessionId,
      fields: [],
      at: expect.any(String),
    })
  })
})
