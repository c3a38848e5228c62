import { randomBytes } from 'node:crypto'
import { decodeJwt, decodeProtectedHeader, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ServiceProcess, startDeployment, tenantAdmin } from './processes'

const databaseUrl = process.env.TEST_DATABASE_URL
const PUBLIC_URL = 'https://credentials.test'

/**
 * OpenID Federation 1.0 §11.1 across processes: two verifier processes serve the tenant's entity
 * configuration; after a rotation of the federation key chain through the management process, both
 * sign with the new key and publish both keys (each process's caches drop on the tenant change).
 */
describe.runIf(databaseUrl)(
  'federation entity configurations across two verifier processes (PostgreSQL)',
  () => {
    const root = { id: `root-${crypto.randomUUID()}`, secret: 'federation-root-secret-0123456789' }
    const tenant = `fe-${randomBytes(4).toString('hex')}`
    const processes: ServiceProcess[] = []
    let auth: Record<string, string>
    const management = () => processes[0] as ServiceProcess
    const configurations = () =>
      Promise.all(
        processes.slice(1).map(async (at) => {
          const answer = await fetch(`${at.origin}/verifiers/${tenant}/.well-known/openid-federation`)
          expect(answer.status).toBe(200)
          return answer.text()
        }),
      )

    beforeAll(async () => {
      processes.push(
        ...(await startDeployment(databaseUrl as string, root, ['management', 'verifier', 'verifier'], {
          PUBLIC_URL,
          DATABASE_POOL_SIZE: '2',
        })),
      )
      const admin = await tenantAdmin(management().origin, root, tenant, ['key:manage', 'registrar:manage'])
      auth = admin.auth
      await admin.post('/key-chains', { source: 'generate', id: 'federation' })
      const saved = await fetch(`${management().origin}/api/federation`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({
          keyChainId: 'federation',
          authorityHints: ['https://intermediate.example.eu'],
        }),
      })
      expect(saved.status).toBe(200)
    }, 120_000)

    afterAll(() => Promise.all(processes.map((p) => p.stop())))

    it('§9, §11.1: both processes sign with the active key; after a rotation both sign with the new one and publish the previous one too', async () => {
      const before = (await configurations()).map((jwt) => decodeProtectedHeader(jwt).kid)
      expect(new Set(before).size).toBe(1)
      const rotated = await fetch(`${management().origin}/api/key-chains/federation/rotate`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{}',
      })
      expect(rotated.status).toBe(200)
      for (let attempt = 0; attempt < 50; attempt++) {
        const jwts = await configurations()
        const kids = jwts.map((jwt) => decodeProtectedHeader(jwt).kid)
        if (kids.every((kid) => kid !== before[0])) {
          for (const jwt of jwts)
            expect((decodeJwt(jwt).jwks as { keys: JWK[] }).keys.map((key) => key.kid)).toStrictEqual([
              kids[0],
              before[0],
            ])
          return
        }
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      throw new Error('the verifier processes did not both sign with the rotated key')
    })
  },
)
