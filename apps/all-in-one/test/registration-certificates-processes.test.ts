import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientToken, type ServiceProcess, startDeployment } from './processes'
import { type RegistrarStandIn, startRegistrarStandIn } from './registrar-standin'

const databaseUrl = process.env.TEST_DATABASE_URL
const SECRET = `registrar-secret-${crypto.randomUUID()}`
const dcql = {
  credentials: [
    {
      id: 'pid',
      format: 'dc+sd-jwt',
      meta: { vct_values: ['urn:eudi:pid:1'] },
      claims: [{ path: ['given_name'] }],
    },
  ],
}

/**
 * Issue 20: a verifier process holds each tenant's registration certificates in memory
 * (createTenantMemo) instead of reading them for every request object. A certificate registered
 * through another process (management) must reach it: the change is announced on the tenant-changes
 * channel and every process drops its copy.
 */
describe.runIf(databaseUrl)('registration certificates across processes (PostgreSQL)', () => {
  const root = { id: `root-${crypto.randomUUID()}`, secret: 'registration-processes-root-secret-0123456789' }
  const tenant = `rcp-${crypto.randomUUID().slice(0, 8)}`
  let registrar: RegistrarStandIn
  let management: ServiceProcess
  let verifier: ServiceProcess
  let auth: Record<string, string>

  const api = async (method: string, path: string, body?: unknown, headers = auth) => {
    const response = await fetch(`${management.origin}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    expect(response.status, `${method} ${path}: ${text}`).toBeLessThan(300)
    return text ? JSON.parse(text) : undefined
  }
  const token = async (clientId: string, clientSecret: string) => ({
    authorization: `Bearer ${await clientToken(management.origin, clientId, clientSecret)}`,
  })
  /** verifier_info of a new request's request object, fetched from the verifier process. */
  const verifierInfo = async () => {
    const created = await api('POST', '/api/presentation-requests', { presentationConfigId: 'pid' })
    const response = await fetch(`${verifier.origin}${new URL(created.requestUri).pathname}`)
    expect(response.status).toBe(200)
    return decodeJwt(await response.text()).verifier_info
  }

  beforeAll(async () => {
    registrar = await startRegistrarStandIn({ id: 'rp-client', secret: SECRET })
    ;[management, verifier] = (await startDeployment(
      databaseUrl as string,
      root,
      ['management', 'verifier'],
      {
        // The stand-in listens on plain http on loopback.
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      },
    )) as [ServiceProcess, ServiceProcess]
    const rootAuth = await token(root.id, root.secret)
    await api('POST', '/api/tenants', { id: tenant, name: tenant }, rootAuth)
    const roles = ['key:manage', 'presentation:config', 'presentation:request', 'registrar:manage']
    const client = await api('POST', `/api/tenants/${tenant}/clients`, { roles }, rootAuth)
    auth = await token(client.clientId, client.clientSecret)
    await api('POST', '/api/key-chains', {
      source: 'generate',
      id: 'rp-keys',
      certificate: { subject: 'CN=Example Verifier,C=DE' },
    })
    await api('POST', '/api/presentations', { id: 'pid', dcqlQuery: dcql, keyChainId: 'rp-keys' })
    await api('PUT', '/api/registrar', {
      baseUrl: registrar.baseUrl,
      tokenUrl: registrar.tokenUrl,
      clientId: 'rp-client',
      clientSecret: SECRET,
    })
    await api('POST', '/api/registrar/relying-party', { name: 'Example Verifier GmbH', roles: ['verifier'] })
  }, 120_000)

  afterAll(async () => {
    await Promise.all([management?.stop(), verifier?.stop()])
    await registrar?.close()
  })

  it('OpenID4VP 1.0 §5.1: a certificate registered through management reaches the verifier process that held none', async () => {
    // The verifier reads the tenant's (empty) certificates once and holds them.
    expect(await verifierInfo()).toBeUndefined()
    expect(await verifierInfo()).toBeUndefined()
    const certificate = await api('POST', '/api/registrar/registration-certificates', {
      presentationConfigId: 'pid',
      purpose: [{ lang: 'en', content: 'Age check' }],
      privacyPolicyUri: 'https://verifier.example.com/privacy',
      supportUri: 'mailto:support@verifier.example.com',
    })
    // NOTIFY reaches the other process within moments. Without it the verifier would serve its copy
    // until the memo's 5 s safety net ends, counted from the read just before the registration.
    const registered = Date.now()
    let info: unknown
    while (info === undefined && Date.now() - registered < 8000) {
      info = await verifierInfo()
      if (info === undefined) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(info).toStrictEqual([{ format: 'registration_cert', data: certificate.jwt }])
    expect(Date.now() - registered, 'seen through the change notification, not the 5 s TTL').toBeLessThan(
      2500,
    )
  })
})
