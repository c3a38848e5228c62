import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startWorld, type World } from '@credential-service/management/testing'
import { createServer } from '@credential-service/server-kit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONSOLE_SECURITY_HEADERS, consolePolicy, consoleRoutes } from '../src/routes/console'

// routes/console.ts: the admin console's static build under /console (issue 22). The console
// itself is tested in a browser: apps/console/test/console.test.ts.
describe('management GET /console', () => {
  let world: World
  const dir = mkdtempSync(join(tmpdir(), 'console-'))
  const html =
    '<!doctype html><meta name="csp-style-nonce" content="style-nonce-placeholder"><script type="module" src="/console/assets/app-1.js"></script>'
  const nonceOf = (body: string) => /content="([^"]+)"/.exec(body)?.[1]
  beforeAll(async () => {
    mkdirSync(join(dir, 'assets'))
    writeFileSync(join(dir, 'index.html'), html)
    writeFileSync(join(dir, 'assets/app-1.js'), 'console.log(1)')
    writeFileSync(join(dir, '.env'), 'SECRET=1')
    writeFileSync(join(dir, 'assets/.hidden.js'), 'SECRET=2')
    world = await startWorld('presentation', { env: { CONSOLE_DIR: dir } })
  })
  afterAll(async () => {
    await world.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const expectSecured = (headers: Record<string, unknown>) => {
    for (const [name, value] of Object.entries(CONSOLE_SECURITY_HEADERS))
      expect(headers[name], name).toBe(value)
    expect(String(headers['content-security-policy'])).toMatch(/^default-src 'none'; script-src 'self';/)
  }

  describe('happy', () => {
    it('serves index.html at /console/ and for every console route, never cached stale', async () => {
      for (const url of ['/console/', '/console/key-chains', '/console/key-chains/signing']) {
        const response = await world.app.inject({ url })
        expect(response.statusCode, url).toBe(200)
        expect(response.headers['content-type']).toBe('text/html; charset=utf-8')
        expect(response.headers['cache-control']).toBe('no-cache')
        const nonce = nonceOf(response.body)
        expect(response.body).toBe(html.replace('content="style-nonce-placeholder"', `content="${nonce}"`))
        expect(response.headers['content-security-policy']).toBe(consolePolicy(nonce))
        expectSecured(response.headers)
      }
    })

    it('redirects /console to /console/', async () => {
      const response = await world.app.inject({ url: '/console' })
      expect(response.statusCode).toBe(301)
      expect(response.headers.location).toBe('/console/')
    })

    it('serves the hashed assets with their type, cached for good; HEAD too', async () => {
      const response = await world.app.inject({ url: '/console/assets/app-1.js' })
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toBe('text/javascript; charset=utf-8')
      expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable')
      expect(response.body).toBe('console.log(1)')
      expectSecured(response.headers)
      const head = await world.app.inject({ method: 'HEAD', url: '/console/assets/app-1.js' })
      expect(head.statusCode).toBe(200)
    })

    it('spec §9.1: GET / still names the service in JSON for API clients', async () => {
      const response = await world.app.inject({ url: '/' })
      expect(response.json()).toStrictEqual({ name: 'credential-service' })
    })
  })

  describe('error', () => {
    it('a missing asset is a 404, not index.html', async () => {
      const response = await world.app.inject({ url: '/console/assets/gone-2.js' })
      expect(response.statusCode).toBe(404)
      expect(response.headers['content-type']).toBe('text/plain; charset=utf-8')
      expectSecured(response.headers)
    })

    it('a console that is not built says how to build it', async () => {
      const app = await createServer({
        logLevel: 'silent',
        ping: async () => true,
        apps: [consoleRoutes({ dir: join(dir, 'absent') })],
      })
      const response = await app.inject({ url: '/console/tenants' })
      expect(response.statusCode).toBe(404)
      expect(response.body).toContain('CONSOLE_DIR=')
      expectSecured(response.headers)
      await app.close()
    })
  })

  describe('security', () => {
    it('issue 22: a strict policy: own scripts only, no inline script, never framed, no sniffing', async () => {
      const response = await world.app.inject({ url: '/console/' })
      const policy = String(response.headers['content-security-policy'])
      expect(policy).toContain("script-src 'self';")
      // Inline <style> only with this answer's nonce, a new one each time.
      const nonce = nonceOf(response.body) as string
      expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/)
      expect(policy).toContain(`style-src 'self' 'nonce-${nonce}';`)
      expect(nonceOf((await world.app.inject({ url: '/console/' })).body)).not.toBe(nonce)
      expect(policy).toContain("frame-ancestors 'none'")
      expect(policy).toContain("default-src 'none'")
      expect(policy).not.toContain('unsafe-inline')
      expect(policy).not.toContain('unsafe-eval')
      expect(response.headers['x-frame-options']).toBe('DENY')
      expect(response.headers['x-content-type-options']).toBe('nosniff')
    })

    it('no file outside the build, and no dot file in it, is served', async () => {
      for (const url of [
        '/console/..%2f..%2fpackage.json',
        '/console/%2e%2e/%2e%2e/package.json',
        '/console/assets/..%2f..%2f..%2fpackage.json',
        '/console/assets/.hidden.js',
        '/console/assets/%2ehidden.js',
      ]) {
        const response = await world.app.inject({ url })
        expect(response.statusCode, url).toBe(404)
        expect(response.body, url).not.toContain('SECRET')
        expect(response.body, url).not.toContain('"private"')
      }
      // A path without an extension is a console route: the page, never the file.
      for (const url of ['/console/.env', '/console/%2eenv'])
        expect((await world.app.inject({ url })).body, url).toContain('<script type="module"')
    })
  })
})
