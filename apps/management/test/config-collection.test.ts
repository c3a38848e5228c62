import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { issueTestCertificate } from '@credential-service/crypto/testing'
import { bearer, startWorld, WORLDS_DIR, type World } from '@credential-service/management/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const PROBLEM = /^application\/problem\+json/
type Headers = Record<string, string>
type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

/** Each collection routes/configs.ts mounts through configCollectionRoutes, with its world item. */
const COLLECTIONS = [
  { path: 'credentials', id: 'pid' },
  { path: 'presentations', id: 'ask' },
  { path: 'attribute-providers', id: 'hr' },
  { path: 'webhook-endpoints', id: 'hooks' },
  { path: 'login-providers', id: 'idp' },
  { path: 'wallet-providers', id: 'wallets' },
] as const
type Collection = (typeof COLLECTIONS)[number]

// routes/config-collection.ts: list, create, get, replace and delete, which every configuration
// collection shares, over the `mgmt-collections` world (each tenant has one item of each
// collection, described as its own, an `admin` with both config roles and a `requester` with
// none). What is particular to a collection (its rules, secrets, references) is checked by
// configs.test.ts, login-providers.test.ts and wallet-providers.test.ts.
describe('management configuration collections', () => {
  let world: World
  let requester: Headers
  let anchor: string
  let serial = 0

  /** A valid body of `collection`: tenant A's world file, with the wallet anchor filled in. */
  function definition(collection: Collection, id: string): Record<string, unknown> {
    const file = join(WORLDS_DIR, 'mgmt-collections', 'a', collection.path, `${collection.id}.json`)
    const body = JSON.parse(readFileSync(file, 'utf8'))
    return { ...body, id, ...(collection.path === 'wallet-providers' ? { trustAnchors: [anchor] } : {}) }
  }
  const fresh = () => `n${++serial}-${crypto.randomUUID().slice(0, 8)}`
  const call = (method: Method, url: string, payload?: object, headers: Headers = world.tenants.a.auth) =>
    world.app.inject({ method, url, headers, ...(payload ? { payload } : {}) })
  const ofTenant = (collection: Collection, tenant: 'a' | 'b' = 'a') =>
    `/api/tenants/${world.tenants[tenant].id}/${collection.path}`

  beforeAll(async () => {
    anchor = (await issueTestCertificate({ subject: 'CN=World Wallet Provider,C=DE', ca: true })).pem
    world = await startWorld('mgmt-collections', { env: { WALLET_ANCHOR: anchor } })
    const { clientId, clientSecret } = world.tenants.a.clients.requester as {
      clientId: string
      clientSecret: string
    }
    requester = await bearer(world.app, clientId, clientSecret)
  })
  afterAll(() => world?.close())

  describe('happy', () => {
    it.each(COLLECTIONS)(
      '$path: the imported item is listed and read, under either mount',
      async (collection) => {
        const list = await call('GET', `/api/${collection.path}?limit=100`)
        expect(list.statusCode, list.body).toBe(200)
        expect(list.json().items).toContainEqual(
          expect.objectContaining({ id: collection.id, description: expect.stringMatching(/tenant A$/) }),
        )
        const item = await call('GET', `/api/${collection.path}/${collection.id}`)
        expect(item.statusCode, item.body).toBe(200)
        expect((await call('GET', `${ofTenant(collection)}/${collection.id}`)).json()).toStrictEqual(
          item.json(),
        )
      },
    )

    it.each(COLLECTIONS)(
      '$path: create (201), replace (200, the path id wins over the body id), delete (204, then 404)',
      async (collection) => {
        const id = fresh()
        const created = await call('POST', `/api/${collection.path}`, definition(collection, id))
        expect(created.statusCode, created.body).toBe(201)
        expect(created.json().id).toBe(id)
        const other = fresh()
        const replaced = await call('PUT', `${ofTenant(collection)}/${id}`, {
          ...definition(collection, other),
          description: 'replaced',
        })
        expect(replaced.statusCode, replaced.body).toBe(200)
        expect(replaced.json()).toMatchObject({ id, description: 'replaced' })
        expect((await call('GET', `/api/${collection.path}/${id}`)).json().description).toBe('replaced')
        expect((await call('GET', `/api/${collection.path}/${other}`)).statusCode).toBe(404)
        const deleted = await call('DELETE', `/api/${collection.path}/${id}`)
        expect(deleted.statusCode, deleted.body).toBe(204)
        expect(deleted.body).toBe('')
        expect((await call('GET', `/api/${collection.path}/${id}`)).statusCode).toBe(404)
      },
    )

    it('pages of one item hold every item once, in the order of one big page', async () => {
      const collection = COLLECTIONS[3]
      for (let i = 0; i < 2; i++)
        expect(
          (await call('POST', '/api/webhook-endpoints', definition(collection, fresh()))).statusCode,
        ).toBe(201)
      const all = (await call('GET', '/api/webhook-endpoints?limit=100')).json()
      expect(all.nextCursor).toBeNull()
      const paged: string[] = []
      let cursor: string | null = null
      do {
        const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''
        const page = (await call('GET', `/api/webhook-endpoints?limit=1${query}`)).json()
        expect(page.items.length).toBeLessThanOrEqual(1)
        paged.push(...page.items.map((item: { id: string }) => item.id))
        cursor = page.nextCursor
      } while (cursor)
      expect(paged).toStrictEqual(all.items.map((item: { id: string }) => item.id))
      expect(paged.length).toBeGreaterThanOrEqual(3)
    })
  })

  describe('error', () => {
    it.each(COLLECTIONS)(
      '$path: RFC 9457: a body with only an id is a 400 naming the missing fields; nothing is written',
      async (collection) => {
        const id = fresh()
        const response = await call('POST', `/api/${collection.path}`, { id })
        expect(response.statusCode).toBe(400)
        expect(response.headers['content-type']).toMatch(PROBLEM)
        expect(response.json().code).toBe('invalid_input')
        const paths = response.json().errors.map((error: { path: string }) => error.path)
        expect(paths.length).toBeGreaterThan(0)
        for (const path of paths) expect(path).toMatch(/^body\./)
        expect((await call('GET', `/api/${collection.path}/${id}`)).statusCode).toBe(404)
      },
    )

    it.each(COLLECTIONS)(
      '$path: an unknown id is 404 to read, replace and delete; a taken id is 409',
      async (collection) => {
        const id = fresh()
        for (const [method, payload] of [
          ['GET', undefined],
          ['PUT', definition(collection, id)],
          ['DELETE', undefined],
        ] as const) {
          const response = await call(method, `/api/${collection.path}/${id}`, payload)
          expect(response.statusCode, method).toBe(404)
          expect(response.json().code).toBe('not_found')
        }
        const taken = await call('POST', `/api/${collection.path}`, definition(collection, collection.id))
        expect(taken.statusCode).toBe(409)
        expect(taken.json().code).toBe('conflict')
      },
    )

    it('a limit out of range or an item id that is no configuration id is a 400 naming it', async () => {
      const limit = await call('GET', '/api/credentials?limit=0')
      expect(limit.statusCode).toBe(400)
      expect(limit.json().errors).toContainEqual(expect.objectContaining({ path: 'querystring.limit' }))
      const badId = await call('GET', '/api/credentials/-starts-with-a-dash')
      expect(badId.statusCode).toBe(400)
      expect(badId.json().errors).toContainEqual(
        expect.objectContaining({ path: 'params.credentialConfigId' }),
      )
    })
  })

  describe('security', () => {
    it.each(COLLECTIONS)(
      '$path: spec §5 rule 4: a client without the collection’s config role is 403 for each operation',
      async (collection) => {
        const item = `/api/${collection.path}/${collection.id}`
        for (const [method, url, payload] of [
          ['GET', `/api/${collection.path}`, undefined],
          ['POST', `/api/${collection.path}`, definition(collection, fresh())],
          ['GET', item, undefined],
          ['PUT', item, definition(collection, collection.id)],
          ['DELETE', item, undefined],
        ] as const) {
          const response = await call(method, url, payload, requester)
          expect(response.statusCode, `${method} ${url}`).toBe(403)
          expect(response.json().code).toBe('forbidden')
        }
        expect((await call('GET', item)).statusCode).toBe(200)
      },
    )

    it.each(COLLECTIONS)(
      '$path: S-100: tenant B reaches its own item of the same id; tenant A’s is 404 to it and unchanged',
      async (collection) => {
        const { b } = world.tenants
        const own = await call('GET', `/api/${collection.path}/${collection.id}`, undefined, b.auth)
        expect(own.statusCode).toBe(200)
        expect(own.json().description).toMatch(/tenant B$/)
        const ofA = `${ofTenant(collection, 'a')}/${collection.id}`
        for (const [method, url, payload] of [
          ['GET', ofTenant(collection, 'a'), undefined],
          ['GET', ofA, undefined],
          ['PUT', ofA, { ...definition(collection, collection.id), description: 'taken over' }],
          ['DELETE', ofA, undefined],
        ] as const) {
          const response = await call(method, url, payload, b.auth)
          expect(response.statusCode, `${method} ${url}`).toBe(404)
        }
        expect((await call('GET', ofA)).json().description).toMatch(/tenant A$/)
      },
    )
  })
})
