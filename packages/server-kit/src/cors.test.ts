import type { FastifyPluginAsync } from 'fastify'
import { describe, expect, it } from 'vitest'
import { createServer } from './create-server'
import { zCommonEnv } from './env'

const ADMIN = 'https://admin.example.com'

/** A management route and a wallet-facing one that answers a DPoP nonce, as the apps do. */
const routes: FastifyPluginAsync = async (app) => {
  app.post('/api/things', async () => ({ ok: true }))
  app.post('/issuers/acme/token', async (_request, reply) =>
    reply.header('dpop-nonce', 'n-1').send({ ok: true }),
  )
}

const serve = (corsOrigins?: string[]) =>
  createServer({
    logLevel: 'silent',
    ping: async () => true,
    apps: [routes],
    ...(corsOrigins ? { corsOrigins } : {}),
  })

const preflight = (origin: string, url = '/api/things') => ({
  method: 'OPTIONS' as const,
  url,
  headers: {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'authorization,content-type,dpop',
  },
})

describe('issue 23 item 4: CORS_ORIGINS', () => {
  it('answers the preflight of a listed origin on /api and on wallet-facing endpoints, and lets it read the answer headers', async () => {
    const app = await serve([ADMIN, 'http://localhost:5173'])
    for (const url of ['/api/things', '/issuers/acme/token']) {
      const answer = await app.inject(preflight(ADMIN, url))
      expect(answer.statusCode, url).toBe(204)
      expect(answer.headers['access-control-allow-origin']).toBe(ADMIN)
      expect(String(answer.headers['access-control-allow-headers']).toLowerCase()).toContain('dpop')
      expect(answer.headers['access-control-allow-credentials']).toBeUndefined()
      expect(answer.headers['access-control-max-age']).toBe('600')
    }
    const token = await app.inject({ method: 'POST', url: '/issuers/acme/token', headers: { origin: ADMIN } })
    expect(token.headers['access-control-allow-origin']).toBe(ADMIN)
    expect(String(token.headers['access-control-expose-headers'])).toContain('DPoP-Nonce')
    // A browser integrator reads which default key chain a minimal configuration got.
    expect(String(token.headers['access-control-expose-headers'])).toContain('X-Default-Key-Chain')
    expect(String(token.headers.vary)).toMatch(/origin/i)
    await app.close()
  })

  it('gives an origin not listed nothing a browser would accept; the request itself is served as before', async () => {
    const app = await serve([ADMIN])
    for (const origin of ['https://evil.example', 'https://admin.example.com.evil.example', 'null']) {
      const answer = await app.inject(preflight(origin))
      expect(answer.headers['access-control-allow-origin'], origin).toBeUndefined()
      const post = await app.inject({ method: 'POST', url: '/api/things', headers: { origin } })
      expect(post.headers['access-control-allow-origin'], origin).toBeUndefined()
    }
    await app.close()
  })

  it('none by default: no preflight route, no CORS header', async () => {
    const app = await serve()
    const answer = await app.inject(preflight(ADMIN))
    expect(answer.statusCode).toBe(404)
    expect(answer.headers['access-control-allow-origin']).toBeUndefined()
    const post = await app.inject({ method: 'POST', url: '/api/things', headers: { origin: ADMIN } })
    expect(post.headers['access-control-allow-origin']).toBeUndefined()
    await app.close()
  })

  it('takes exact origins only: a path, a wildcard or another scheme is a configuration error', () => {
    const origins = zCommonEnv.shape.CORS_ORIGINS
    expect(origins.parse(` ${ADMIN}, http://localhost:5173 `)).toStrictEqual([ADMIN, 'http://localhost:5173'])
    expect(origins.parse(undefined)).toStrictEqual([])
    for (const bad of [
      '*',
      'https://admin.example.com/',
      'https://*.example.com',
      'ftp://x.example',
      'admin.example.com',
    ])
      expect(origins.safeParse(bad).success, bad).toBe(false)
  })
})
