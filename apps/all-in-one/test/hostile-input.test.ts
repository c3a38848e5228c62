import type { Database } from '@credential-service/db-schema'
import { queryRows, testDatabases } from '@credential-service/db-schema/testing'
import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPE_BASE } from '@credential-service/server-kit'
import { sql } from 'drizzle-orm'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, startAllInOne } from './harness'

// Issue 11 "Hardening": input that PostgreSQL refuses (NUL, lone surrogates), input that exhausts
// the stack (deep nesting) and forged pagination cursors are refused at the edge with a 4xx in the
// shape of the route (S-112 problem+json on /api, OAuth JSON on protocol routes), never a 500.

/** A JSON text value (not a JS string): each is valid JSON that PostgreSQL or the stack cannot take. */
const JSON_VALUES = {
  'NUL in a string': '"x\\u0000y"',
  'lone high surrogate': '"x\\ud800y"',
  'lone low surrogate': '"\\udc00"',
  'NUL in a key': '{"a\\u0000b": 1}',
  '10,000 nested arrays': `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  '10,000 nested objects': `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`,
} as const

/**
 * Where the edge reports each value: deep nesting is refused while reading, before any field; a bad
 * key at its object (the key itself is not echoed).
 */
const issuePath = (value: keyof typeof JSON_VALUES, field: string) =>
  value.startsWith('10,000') ? 'body' : field

type Shape = 'problem' | 'oauth'

interface RouteCase {
  method: 'GET' | 'POST' | 'PATCH'
  /** `{t}` is the test tenant; `{p}` marks the path parameter the path tests replace. */
  url: string
  shape: Shape
  /** Management routes are called with the operator's or the tenant admin's token; wallet routes with none. */
  auth?: 'operator' | 'tenant'
  /** Name of the `{p}` parameter. */
  param?: string
  /** A JSON body with the hostile value at `field` (dotted, from `body`). */
  json?: { body: (value: string) => string; field: string }
  /** A form body with a NUL at `field`. */
  form?: { body: string; field: string }
  /** The OAuth `error` of a refusal when not `invalid_request` (the credential endpoints, I-69). */
  oauthError?: string
}

const description = (rest: string) => ({
  body: (v: string) => `{${rest},"description":${v}}`,
  field: 'body.description',
})

const ROUTES: RouteCase[] = [
  {
    method: 'POST',
    url: '/api/tenants',
    shape: 'problem',
    auth: 'operator',
    json: description('"id":"{t}-new","name":"n"'),
  },
  {
    method: 'PATCH',
    url: '/api/tenants/{p}',
    param: 'tenantId',
    shape: 'problem',
    auth: 'operator',
    json: { body: (v) => `{"name":${v}}`, field: 'body.name' },
  },
  {
    method: 'POST',
    url: '/api/tenants/{t}/clients',
    shape: 'problem',
    auth: 'tenant',
    json: description('"roles":["issuance:offer"]'),
  },
  { method: 'GET', url: '/api/tenants/{t}/clients/{p}', param: 'clientId', shape: 'problem', auth: 'tenant' },
  {
    method: 'POST',
    url: '/api/tenants/{t}/key-chains',
    shape: 'problem',
    auth: 'tenant',
    json: description('"source":"generate","id":"k1"'),
  },
  {
    method: 'GET',
    url: '/api/tenants/{t}/key-chains/{p}',
    param: 'keyChainId',
    shape: 'problem',
    auth: 'tenant',
  },
  {
    method: 'POST',
    url: '/api/tenants/{t}/webhook-endpoints',
    shape: 'problem',
    auth: 'tenant',
    json: description('"id":"w1","url":"https://hooks.example"'),
  },
  {
    // The type metadata document keeps extension members, so the value sits in a free-form one.
    method: 'POST',
    url: '/api/tenants/{t}/schema-metadata/sign-version',
    shape: 'problem',
    auth: 'tenant',
    json: {
      body: (v) => `{"metadata":{"vct":"urn:x","x-extra":${v}},"keyChainId":"k1","version":"1.0.0"}`,
      field: 'body.metadata.x-extra',
    },
  },
  {
    method: 'GET',
    url: '/api/tenants/{t}/credentials/{p}',
    param: 'credentialConfigId',
    shape: 'problem',
    auth: 'tenant',
  },
  {
    method: 'POST',
    url: '/api/tenants/{t}/offers',
    shape: 'problem',
    auth: 'tenant',
    json: {
      body: (v) => `{"credentialConfigurationIds":["pid"],"claims":{"pid":{"name":${v}}}}`,
      field: 'body.claims.pid.name',
    },
  },
  {
    method: 'POST',
    url: '/api/tenants/{t}/presentation-requests',
    shape: 'problem',
    auth: 'tenant',
    json: {
      body: (v) => `{"presentationConfigId":"age","transactionData":[{"type":${v},"credential_ids":["a"]}]}`,
      field: 'body.transactionData.0.type',
    },
  },
  { method: 'GET', url: '/api/tenants/{t}/sessions/{p}', param: 'id', shape: 'problem', auth: 'tenant' },
  {
    method: 'POST',
    url: '/api/oauth2/token',
    shape: 'oauth',
    json: { body: (v) => `{"grant_type":"client_credentials","client_id":${v}}`, field: 'body.client_id' },
    form: { body: 'grant_type=client_credentials&client_id=a%00b', field: 'body.client_id' },
  },
  {
    method: 'POST',
    url: '/issuers/{p}/token',
    param: 'tenant',
    shape: 'oauth',
    json: { body: (v) => `{"grant_type":"x","pre-authorized_code":${v}}`, field: 'body.pre-authorized_code' },
    form: { body: 'grant_type=x&pre-authorized_code=a%00b', field: 'body.pre-authorized_code' },
  },
  { method: 'POST', url: '/issuers/{p}/nonce', param: 'tenant', shape: 'oauth' },
  {
    method: 'POST',
    url: '/issuers/{p}/credential',
    param: 'tenant',
    shape: 'oauth',
    json: { body: (v) => `{"credential_configuration_id":${v}}`, field: 'body.credential_configuration_id' },
    oauthError: 'invalid_credential_request',
  },
  {
    method: 'POST',
    url: '/issuers/{p}/deferred-credential',
    param: 'tenant',
    shape: 'oauth',
    json: { body: (v) => `{"transaction_id":${v}}`, field: 'body.transaction_id' },
    oauthError: 'invalid_credential_request',
  },
  {
    method: 'POST',
    url: '/issuers/{p}/notification',
    param: 'tenant',
    shape: 'oauth',
    json: {
      body: (v) => `{"notification_id":${v},"event":"credential_accepted"}`,
      field: 'body.notification_id',
    },
  },
  { method: 'GET', url: '/issuers/{t}/offers/{p}', param: 'id', shape: 'oauth' },
  {
    method: 'GET',
    url: '/.well-known/openid-credential-issuer/issuers/{p}',
    param: 'tenant',
    shape: 'oauth',
  },
  {
    method: 'POST',
    url: '/verifiers/{t}/responses/{p}',
    param: 'requestId',
    shape: 'oauth',
    form: { body: 'state=s&response=a%00b', field: 'body.response' },
  },
  { method: 'GET', url: '/verifiers/{t}/requests/{p}', param: 'requestId', shape: 'oauth' },
  {
    method: 'POST',
    url: '/verifiers/{t}/requests/{p}',
    param: 'requestId',
    shape: 'oauth',
    form: { body: 'wallet_nonce=a%00b', field: 'body.wallet_nonce' },
  },
]

const TENANT_ROLES = [
  'tenant:admin',
  'issuance:offer',
  'issuance:config',
  'presentation:request',
  'presentation:config',
  'key:manage',
]

const LISTS = [
  '/api/tenants',
  '/api/tenants/{t}/clients',
  '/api/tenants/{t}/key-chains',
  '/api/tenants/{t}/credentials',
  '/api/tenants/{t}/presentations',
  '/api/tenants/{t}/attribute-providers',
  '/api/tenants/{t}/webhook-endpoints',
  '/api/tenants/{t}/sessions',
]

/** Rows per table that carries a tenant_id, for one tenant (the suite's tenant is fresh). */
async function rowsOf(db: Database, tenant: string): Promise<Record<string, number>> {
  const tables = await queryRows<{ table_name: string }>(
    db,
    sql`select table_name from information_schema.columns
        where table_schema = 'public' and column_name = 'tenant_id' order by table_name`,
  )
  const counts: Record<string, number> = {}
  for (const { table_name: table } of tables) {
    const [row] = await queryRows<{ n: number }>(
      db,
      sql`select count(*)::int as n from ${sql.identifier(table)} where tenant_id = ${tenant}`,
    )
    counts[table] = Number(row?.n)
  }
  return counts
}

describe.each(testDatabases())('issue 11: hostile input is a 4xx, never a 500, on $name', (testDatabase) => {
  let app: FastifyInstance
  let db: Database
  let root: Record<string, string>
  let admin: Record<string, string>
  const tenant = `hi-${crypto.randomUUID().slice(0, 8)}`
  let before: Record<string, number>

  beforeAll(async () => {
    const started = await startAllInOne(testDatabase)
    app = started.app
    db = started.database.db
    await app.ready()
    root = await bearer(app, started.rootClientId, started.rootSecret)
    for (const id of [tenant, `${tenant}-2`]) {
      const created = await app.inject({
        method: 'POST',
        url: '/api/tenants',
        headers: root,
        payload: { id, name: id },
      })
      expect(created.statusCode).toBe(201)
    }
    const client = await app.inject({
      method: 'POST',
      url: `/api/tenants/${tenant}/clients`,
      headers: root,
      payload: { roles: TENANT_ROLES },
    })
    admin = await bearer(app, client.json().clientId, client.json().clientSecret)
    before = await rowsOf(db, tenant)
  })
  afterAll(() => app.close())

  const fill = (url: string, param = 'p0') => url.replaceAll('{t}', tenant).replace('{p}', param)

  async function send(route: RouteCase, options: Omit<InjectOptions, 'method'>) {
    const response = await app.inject({
      method: route.method,
      ...options,
      headers: {
        ...(route.auth === 'operator' ? root : route.auth === 'tenant' ? admin : {}),
        ...(options.headers as Record<string, string>),
      },
    })
    return response
  }

  function expectRefused(
    response: Awaited<ReturnType<typeof send>>,
    shape: Shape,
    path: string,
    instance: string,
    oauthError = 'invalid_request',
  ) {
    expect(response.statusCode, response.body).toBe(400)
    if (shape === 'problem') {
      expect(response.headers['content-type']).toBe(`${PROBLEM_CONTENT_TYPE}; charset=utf-8`)
      expect(response.json()).toStrictEqual({
        type: `${PROBLEM_TYPE_BASE}invalid-input`,
        title: 'Invalid input',
        status: 400,
        detail: expect.any(String),
        instance,
        code: 'invalid_input',
        errors: [{ path, message: expect.any(String) }],
      })
    } else {
      expect(response.headers['cache-control']).toBe('no-store')
      expect(response.json()).toStrictEqual({
        error: oauthError,
        error_description: expect.any(String),
      })
      // The description names where the bad value is.
      expect(response.json().error_description).toContain(path)
    }
  }

  const jsonCases = ROUTES.flatMap((route) =>
    route.json
      ? Object.keys(JSON_VALUES).map((value) => ({ route, value: value as keyof typeof JSON_VALUES }))
      : [],
  )
  it.each(jsonCases)(
    'S-12, S-123: $value in a JSON body of $route.method $route.url',
    async ({ route, value }) => {
      const json = route.json as NonNullable<RouteCase['json']>
      const url = fill(route.url, tenant)
      const response = await send(route, {
        url,
        headers: { 'content-type': 'application/json' },
        payload: fill(json.body(JSON_VALUES[value])),
      })
      expectRefused(response, route.shape, issuePath(value, json.field), url, route.oauthError)
    },
  )

  const formCases = ROUTES.filter((route) => route.form)
  it.each(formCases)('S-12: NUL in a form body of $method $url', async (route) => {
    const form = route.form as NonNullable<RouteCase['form']>
    const url = fill(route.url, tenant)
    const response = await send(route, {
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form.body,
    })
    expectRefused(response, route.shape, form.field, url, route.oauthError)
  })

  it.each(ROUTES)('S-12: NUL in the query string of $method $url', async (route) => {
    const url = fill(route.url, tenant)
    const response = await send(route, { url: `${url}?probe=a%00b` })
    expectRefused(response, route.shape, 'query.probe', url, route.oauthError)
  })

  it.each(ROUTES.filter((route) => route.param))('S-12: NUL in the path of $method $url', async (route) => {
    const url = fill(route.url, 'a%00b')
    const response = await send(route, { url })
    expectRefused(response, route.shape, `params.${route.param}`, url, route.oauthError)
  })

  it.each(ROUTES.filter((route) => route.param))(
    'S-12: a lone surrogate in the path of $method $url',
    async (route) => {
      // %ED%A0%80 is U+D800 in (invalid) UTF-8: decoded, it must not reach the database.
      const url = fill(route.url, 'a%ED%A0%80b')
      const response = await send(route, { url })
      expect(response.statusCode, response.body).toBeGreaterThanOrEqual(400)
      expect(response.statusCode, response.body).toBeLessThan(500)
    },
  )

  it.each(ROUTES.filter((route) => route.param))(
    'issue 19, RFC 9110 §15.5.15: a path parameter of 101 characters in $method $url is a 414 in the route shape, the path not echoed',
    async (route) => {
      const long = `x${'a'.repeat(99)}Z`
      const response = await send(route, { url: fill(route.url, long) })
      expect(response.statusCode, response.body).toBe(414)
      expect(response.headers['cache-control']).toBe('no-store')
      expect(response.body).not.toContain('aaaa')
      if (route.shape === 'problem') {
        expect(response.headers['content-type']).toBe(`${PROBLEM_CONTENT_TYPE}; charset=utf-8`)
        expect(response.json()).toStrictEqual({
          type: `${PROBLEM_TYPE_BASE}uri-too-long`,
          title: 'URI too long',
          status: 414,
          detail: 'the request URI is longer than allowed',
          code: 'uri_too_long',
        })
      } else {
        expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
        expect(response.json()).toStrictEqual({
          error: 'invalid_request',
          error_description: 'the request URI is longer than allowed',
        })
      }
    },
  )

  it.each([
    ['GET', '/api/tenants/{t}/clients/%E0%A4%A', 'problem'],
    ['POST', '/issuers/%E0%A4%A/token', 'oauth'],
  ] as const)(
    'issue 19: a malformed percent-encoding in %s %s is a 400 in the route shape, the path not echoed',
    async (method, url, shape) => {
      const response = await send({ method, url, shape, auth: 'tenant' }, { url: fill(url) })
      expect(response.statusCode, response.body).toBe(400)
      expect(response.body).not.toContain('%E0')
      expect(response.json()).toMatchObject(
        shape === 'problem' ? { code: 'malformed_request' } : { error: 'invalid_request' },
      )
    },
  )

  describe('S-12: pagination cursors', () => {
    const cursors: Record<string, () => Promise<string>> = {
      'garbage bytes (NUL once decoded)': async () => 'AAAA',
      'not base64url': async () => '!!!!',
      'base64url of text no list handed out': async () => Buffer.from('zz').toString('base64url'),
      'a cursor of another list': async () => {
        const page = await app.inject({ url: '/api/tenants?limit=1', headers: root })
        return page.json().nextCursor as string
      },
    }
    const cases = LISTS.flatMap((list) => Object.keys(cursors).map((kind) => ({ list, kind })))
    it.each(cases)('$kind on $list is a 400 problem', async ({ list, kind }) => {
      const cursor = await (cursors[kind] as () => Promise<string>)()
      const url = fill(list)
      // The tenants list hands out its own cursors: its "other list" is the clients list.
      const foreign =
        kind === 'a cursor of another list' && list === '/api/tenants'
          ? await otherListCursor()
          : encodeURIComponent(cursor)
      const response = await app.inject({
        url: `${url}?cursor=${foreign}`,
        headers: list === '/api/tenants' ? root : admin,
      })
      expectRefused(response, 'problem', 'query.cursor', url)
    })

    async function otherListCursor() {
      for (const roles of [['issuance:offer'], ['presentation:request']]) {
        await app.inject({
          method: 'POST',
          url: `/api/tenants/${tenant}-2/clients`,
          headers: root,
          payload: { roles },
        })
      }
      const page = await app.inject({ url: `/api/tenants/${tenant}-2/clients?limit=1`, headers: root })
      return encodeURIComponent(page.json().nextCursor as string)
    }

    it('a cursor the list handed out still pages (no regression)', async () => {
      const first = (await app.inject({ url: '/api/tenants?limit=1', headers: root })).json()
      const second = await app.inject({
        url: `/api/tenants?limit=1&cursor=${encodeURIComponent(first.nextCursor)}`,
        headers: root,
      })
      expect(second.statusCode).toBe(200)
      expect(second.json().items[0].id > first.items[0].id).toBe(true)
    })
  })

  it('S-12: POST /issuers/{unknown tenant}/nonce is a 404 OAuth error, not a 500', async () => {
    const response = await app.inject({ method: 'POST', url: '/issuers/no-such-tenant-0/nonce' })
    expect(response.statusCode).toBe(404)
    expect(response.headers['cache-control']).toBe('no-store')
    expect(response.json()).toStrictEqual({ error: 'not_found', error_description: expect.any(String) })
  })

  it('issue 11: none of the refused requests wrote anything', async () => {
    expect(await rowsOf(db, tenant)).toStrictEqual(before)
    const created = await app.inject({ url: `/api/tenants/${tenant}-new`, headers: root })
    expect(created.statusCode).toBe(404)
    const [nonces] = await queryRows<{ n: number }>(
      db,
      sql`select count(*)::int as n from nonces where tenant_id = 'no-such-tenant-0'`,
    )
    expect(Number(nonces?.n)).toBe(0)
  })
})
