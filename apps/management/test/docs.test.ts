import { startWorld, type World } from '@credential-service/management/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// routes/docs.ts: the Swagger UI at /api/docs, built on the first request (issue 20), over the
// `presentation` world. The OpenAPI document itself (operation ids, components, the webhooks of
// routes/docs-webhooks.ts) is checked by openapi.test.ts; the provider's token URL in OIDC mode
// by oidc-mode.test.ts.
describe('management GET /api/docs', () => {
  let world: World
  beforeAll(async () => {
    world = await startWorld('presentation')
  })
  afterAll(() => world.close())

  const get = (url: string) => world.app.inject({ url })

  describe('happy', () => {
    it('issue 20: /api/docs and /api/docs/ serve the Swagger UI page; every asset it loads is served', async () => {
      for (const url of ['/api/docs', '/api/docs/']) {
        const page = await get(url)
        expect(page.statusCode, url).toBe(200)
        expect(page.headers['content-type']).toMatch(/^text\/html/)
        expect(page.body).toContain('<title>Swagger UI</title>')
      }
      const page = (await get('/api/docs/')).body
      const assets = [...page.matchAll(/(?:src|href)="\.\/([^"]+)"/g)].map((match) => match[1] as string)
      expect(assets).toContain('static/swagger-initializer.js')
      for (const asset of assets) {
        const loaded = await get(`/api/docs/${asset}`)
        expect(loaded.statusCode, asset).toBe(200)
        expect(loaded.rawPayload.length, asset).toBeGreaterThan(0)
      }
    })

    it('spec §5.3: the UI’s document is the one at /api/docs-json; it authorizes at the built-in token endpoint', async () => {
      const served = await get('/api/docs-json')
      expect(served.statusCode).toBe(200)
      const ofUi = await get('/api/docs/json')
      expect(ofUi.statusCode).toBe(200)
      expect(ofUi.json()).toStrictEqual(served.json())
      expect(served.json().components.securitySchemes.oauth2.flows.clientCredentials.tokenUrl).toBe(
        '/api/oauth2/token',
      )
      // Issue 23 item 4: relative, so "Try it out" calls the origin the page was opened on.
      expect(served.json().servers).toStrictEqual([
        { url: '/', description: 'The origin this description is served from' },
      ])
    })

    it('issue 23 item 8: GET /api leads to the docs: a browser is redirected there, a program gets the links', async () => {
      const browser = await world.app.inject({ url: '/api', headers: { accept: 'text/html,*/*;q=0.8' } })
      expect([browser.statusCode, browser.headers.location]).toStrictEqual([302, '/api/docs'])
      for (const accept of ['application/json', '*/*', undefined]) {
        const program = await world.app.inject({ url: '/api', headers: accept ? { accept } : {} })
        expect(program.statusCode, accept).toBe(200)
        const { links } = program.json()
        expect(links).toStrictEqual({
          console: '/console/',
          docs: '/api/docs',
          openapi: '/api/docs-json',
          token: '/api/oauth2/token',
          health: '/api/health',
        })
        for (const link of [links.docs, links.openapi, links.health])
          expect((await get(link)).statusCode, link).toBe(200)
      }
    })

    it('HEAD /api/docs/ answers as GET does, without a body', async () => {
      const head = await world.app.inject({ method: 'HEAD', url: '/api/docs/' })
      expect(head.statusCode).toBe(200)
      expect(head.headers['content-type']).toMatch(/^text\/html/)
      expect(head.body).toBe('')
    })
  })

  describe('error', () => {
    it('RFC 9457: a path under /api/docs the UI does not serve is this app’s 404 problem', async () => {
      const missing = await get('/api/docs/static/no-such-asset.js')
      expect(missing.statusCode).toBe(404)
      expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(missing.json()).toMatchObject({ status: 404, code: 'route_not_found' })
    })
  })

  describe('security', () => {
    it('the docs need no token and pass through this app’s hooks (request id, service version)', async () => {
      for (const url of ['/api/docs/', '/api/docs/static/swagger-initializer.js', '/api/docs-json']) {
        const response = await get(url)
        expect(response.statusCode, url).toBe(200)
        expect(response.headers['x-request-id'], url).toMatch(/^req_/)
        expect(response.headers['x-service-version'], url).toEqual(expect.any(String))
      }
    })

    it('the document describes the API, never a deployment’s tenants or clients', async () => {
      const body = (await get('/api/docs-json')).body
      for (const tenant of [world.tenants.a, world.tenants.b]) {
        expect(body).not.toContain(tenant.id)
        expect(body).not.toContain(tenant.clientId)
      }
      expect(body).not.toContain(world.config.AUTH_CLIENT_ID as string)
    })
  })
})
