import { randomBytes } from 'node:crypto'
import type { Principal, Role } from '@credential-service/core-domain'
import { createClientRepository, createTenantRepository } from '@credential-service/db-schema'
import type { DatabaseHandle } from '@credential-service/db-schema/client'
import { testDatabases } from '@credential-service/db-schema/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ProviderTokenVerifier, providerTenantVerifier, type VerifyAccessToken } from './auth'
import { createTenantCache } from './tenant-cache'

const CONSOLE = 'credential-service-console'
const random = (prefix: string) => `${prefix}-${randomBytes(6).toString('hex')}`
const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000)

/**
 * The external provider's tokens as the management app's verifier reads them (signature, iss,
 * aud and lifetime already checked): here the "token" is the principal and `iat` it stands for,
 * so each case states exactly what the provider put in it.
 */
interface Claims {
  clientId: string
  tenantId?: string
  roles: Role[]
  iat: number
}
const asProvider: ProviderTokenVerifier = async (token) => {
  const claims = JSON.parse(token) as Claims
  const principal: Principal = { clientId: claims.clientId, tenantId: claims.tenantId, roles: claims.roles }
  return { principal, issuedAt: claims.iat }
}
const token = (claims: Claims) => JSON.stringify(claims)

describe.each(testDatabases())('providerTenantVerifier (OIDC mode) on $name', (testDatabase) => {
  let database: DatabaseHandle
  let verify: VerifyAccessToken
  let tenantId: string
  let tenantCreated: number
  let apiClient: { clientId: string; createdAt: number }

  beforeAll(async () => {
    database = await testDatabase.open()
    tenantId = random('t')
    const tenant = await createTenantRepository(database.db).create({ id: tenantId, name: tenantId })
    tenantCreated = seconds(tenant?.createdAt as string)
    const client = await createClientRepository(database.db, tenantId).create({
      clientId: random('cli'),
      secretHash: 'not-a-secret',
      roles: ['key:read'],
    })
    apiClient = { clientId: client?.clientId as string, createdAt: seconds(client?.createdAt as string) }
    verify = providerTenantVerifier(asProvider, createTenantCache({ db: database.db }), {
      consoleClientId: CONSOLE,
    })
  })
  afterAll(async () => {
    await createTenantRepository(database.db).delete(tenantId)
    await database?.close()
  })

  const refused = (claims: Claims) =>
    expect(verify(token(claims))).rejects.toMatchObject({ code: 'unauthenticated', invalidToken: true })

  it("checklist S-108: a console user's token naming an existing tenant, issued after it was created, is accepted", async () => {
    const now = Math.floor(Date.now() / 1000)
    expect(
      await verify(token({ clientId: CONSOLE, tenantId, roles: ['tenant:admin', 'key:manage'], iat: now })),
    ).toStrictEqual({ clientId: CONSOLE, tenantId, roles: ['tenant:admin', 'key:manage'] })
    // Within the clock skew the provider's clock may run behind the service's.
    await expect(
      verify(token({ clientId: CONSOLE, tenantId, roles: ['key:read'], iat: tenantCreated - 20 })),
    ).resolves.toMatchObject({ tenantId })
  })

  it("checklist S-108: a console user's token naming a tenant that does not exist is refused", async () => {
    await refused({
      clientId: CONSOLE,
      tenantId: random('gone'),
      roles: ['tenant:admin'],
      iat: tenantCreated,
    })
  })

  it("checklist S-108: a console user's token issued before the tenant was created is refused", async () => {
    await refused({ clientId: CONSOLE, tenantId, roles: ['tenant:admin'], iat: tenantCreated - 120 })
  })

  it('checklist S-108: another public client naming a tenant is refused; an API client only as its own', async () => {
    const iat = Math.floor(Date.now() / 1000)
    await refused({ clientId: 'made-by-hand', tenantId, roles: ['tenant:admin'], iat })
    // A prefix or different case of the console's id is another client.
    await refused({ clientId: `${CONSOLE}-2`, tenantId, roles: ['tenant:admin'], iat })
    await refused({ clientId: CONSOLE.toUpperCase(), tenantId, roles: ['tenant:admin'], iat })
    await expect(verify(token({ ...apiClient, tenantId, roles: ['key:read'], iat }))).resolves.toMatchObject({
      clientId: apiClient.clientId,
    })
    await refused({
      clientId: apiClient.clientId,
      tenantId,
      roles: ['key:read'],
      iat: apiClient.createdAt - 120,
    })
  })

  it('checklist S-108: without a configured console client its id gets no exception', async () => {
    const plain = providerTenantVerifier(asProvider, createTenantCache({ db: database.db }))
    const iat = Math.floor(Date.now() / 1000)
    await expect(
      plain(token({ clientId: CONSOLE, tenantId, roles: ['tenant:admin'], iat })),
    ).rejects.toMatchObject({
      code: 'unauthenticated',
    })
  })

  it('spec §5 rules 2 and 3: tenant:manage with a tenant is refused, also from the console; no tenant needs tenant:manage', async () => {
    const iat = Math.floor(Date.now() / 1000)
    await refused({ clientId: CONSOLE, tenantId, roles: ['tenant:manage'], iat })
    await refused({ clientId: CONSOLE, tenantId, roles: ['tenant:admin', 'tenant:manage'], iat })
    await refused({ clientId: CONSOLE, roles: ['tenant:admin'], iat })
    // Operators (no tenant) as before: trusted as the provider issues them.
    expect(await verify(token({ clientId: CONSOLE, roles: ['tenant:manage'], iat }))).toStrictEqual({
      clientId: CONSOLE,
      tenantId: undefined,
      roles: ['tenant:manage'],
    })
  })
})
