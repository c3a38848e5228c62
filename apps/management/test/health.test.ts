import { startWorld, type World } from '@credential-service/management/testing'
import { SERVICE_VERSION } from '@credential-service/server-kit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// routes/health.ts: status, version and database reachability, without authentication.
describe('management GET /api/health', () => {
  let world: World
  beforeAll(async () => {
    world = await startWorld('presentation')
  })
  afterAll(() => world.close())

  it('answers ok with the version and the database kind, to anyone', async () => {
    const response = await world.app.inject({ url: '/api/health' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toStrictEqual({
      status: 'ok',
      version: SERVICE_VERSION,
      database: { status: 'up', kind: world.database.kind },
    })
  })

  // The 503 of a database that does not answer: apps/all-in-one/test/db-fault.test.ts.
})
