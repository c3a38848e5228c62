import type { Role } from '@credential-service/core-domain'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { createManagementClient, ManagementApiError, type Tenant } from '@credential-service/sdk'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import { startAllInOne } from './harness'

describe('SDK against a listening service', () => {
  let app: FastifyInstance
  let baseUrl: string
  let clientId: string
  let clientSecret: string

  beforeAll(async () => {
    ;({
      app,
      rootClientId: clientId,
      rootSecret: clientSecret,
    } = await startAllInOne(testDatabases().at(-1) as TestDatabase, 'http://127.0.0.1'))
    await app.listen({ host: '127.0.0.1', port: 0 })
    const address = app.server.address()
    baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  })
  afterAll(() => app.close())

  it('manages tenants and clients end to end with typed results', async () => {
    const root = createManagementClient({ baseUrl, clientId, clientSecret })
    const id = `sdk-${crypto.randomUUID().slice(0, 8)}`
    const tenant = await root.createTenant({ id, name: 'SDK tenant' })
    expectTypeOf(tenant).toEqualTypeOf<Tenant>()
    expect(tenant.id).toBe(id)

    const created = await root.createClient({ roles: ['tenant:admin'] }, id)
    expectTypeOf(created.roles).toEqualTypeOf<Role[]>()
    const admin = createManagementClient({
      baseUrl,
      clientId: created.clientId,
      clientSecret: created.clientSecret,
    })
    const own = await admin.listClients()
    expect(own.items.map((c) => c.clientId)).toStrictEqual([created.clientId])

    const rotated = await root.rotateClientSecret(created.clientId, {}, id)
    expect(rotated.clientSecret).not.toBe(created.clientSecret)
    await root.deleteTenant(id)
    await expect(root.getTenant(id)).rejects.toMatchObject({ status: 404, problem: { code: 'not_found' } })
  })

  it('surfaces token failures as ManagementApiError', async () => {
    const wrong = createManagementClient({ baseUrl, clientId, clientSecret: 'not-the-secret-at-all' })
    const error = await wrong.listTenants().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ManagementApiError)
    expect(error).toMatchObject({ status: 401, problem: { error: 'invalid_client' } })
  })
})
