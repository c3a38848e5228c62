import { randomBytes } from 'node:crypto'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startReceiver, webhookEvent } from './harness'
import {
  clientToken,
  type FreshDatabase,
  freshDatabase,
  managementPoster,
  type ServiceProcess,
  startDeployment,
} from './processes'

const databaseUrl = process.env.TEST_DATABASE_URL
const OFFERS = 150
const ABANDONED = 60
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Issue 42 item 1: `issuance.expired` exactly once per offer with two issuer processes sweeping
 * the same PostgreSQL database every second (expiry-sweep.ts: the sweep's conditional update
 * claims each expiry; more offers than one batch, so both processes claim at once). Some offers
 * were redeemed and abandoned (brief ops42 item 1): `stage` `token_issued`, also once. A database
 * of its own: the sweep and the poll act on every tenant's rows.
 */
describe.runIf(databaseUrl)('offer expiry reported once across two issuer processes (PostgreSQL)', () => {
  const root = { id: `root-${randomBytes(4).toString('hex')}`, secret: 'expiry-processes-root-secret-0123' }
  const tenant = `ex-${randomBytes(4).toString('hex')}`
  let database: FreshDatabase
  let processes: ServiceProcess[] = []
  let receiver: Awaited<ReturnType<typeof startReceiver>>

  beforeAll(async () => {
    database = await freshDatabase()
    receiver = await startReceiver()
    processes = await startDeployment(database.url, root, ['management', 'issuer', 'issuer'], {
      PUBLIC_URL: 'https://credentials.test',
      WEBHOOK_POLL_SECONDS: '1',
      OUTBOUND_ALLOW_HTTP: 'true',
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
    })
  }, 120_000)

  afterAll(async () => {
    receiver?.close()
    await Promise.all(processes.map((p) => p.stop()))
    await database?.drop()
  })

  it('each expired or abandoned offer is reported once, however many processes sweep', async () => {
    const management = processes[0] as ServiceProcess
    const operator = managementPoster(
      management.origin,
      await clientToken(management.origin, root.id, root.secret),
    )
    await operator('/tenants', { id: tenant, name: tenant })
    const admin = { clientId: `${tenant}-admin`, clientSecret: 'expiry-processes-admin-secret-0123' }
    await operator(`/tenants/${tenant}/clients`, {
      ...admin,
      roles: ['key:manage', 'issuance:config', 'issuance:offer'],
    })
    const token = await clientToken(management.origin, admin.clientId, admin.clientSecret)
    const api = managementPoster(management.origin, token)
    await api('/key-chains', { source: 'generate', id: 'keys' })
    await api('/webhook-endpoints', { id: 'events', url: `${receiver.url}/in` })
    await api('/credentials', {
      id: 'pid',
      config: { format: 'dc+sd-jwt', vct: 'urn:example:pid' },
      keyChainId: 'keys',
      fields: [{ path: ['given_name'], type: 'string', disclosable: true }],
      webhookEndpointId: 'events',
    })
    for (let n = 0; n < OFFERS; n += 10)
      await Promise.all(
        Array.from({ length: 10 }, () =>
          api('/offers', { credentialConfigurationIds: ['pid'], claims: { pid: { given_name: 'Erika' } } }),
        ),
      )
    // Time passes for every offer at once: their expiry moves into the past. Some were redeemed
    // (as the token endpoint records it) more than an access token's lifetime ago, and abandoned.
    const sql = postgres(database.url, { max: 1, onnotice: () => {} })
    try {
      const redeemed = await sql`update issuance_sessions
        set status = 'token_issued', token_issued_at = now() - interval '301 seconds'
        where tenant_id = ${tenant} and id in (
          select id from issuance_sessions where tenant_id = ${tenant} order by id limit ${ABANDONED})`
      expect(redeemed.count).toBe(ABANDONED)
      const moved = await sql`update issuance_sessions set expires_at = now() - interval '1 second'
        where tenant_id = ${tenant}`
      expect(moved.count).toBe(OFFERS)
    } finally {
      await sql.end()
    }
    for (let waited = 0; waited < 60_000 && receiver.received.length < OFFERS; waited += 200) await sleep(200)
    // Further sweeps of both processes add nothing.
    await sleep(4000)
    const events = receiver.received.map((call) => webhookEvent(call))
    expect(events).toHaveLength(OFFERS)
    expect(new Set(events.map((e) => e.sessionId)).size).toBe(OFFERS)
    expect(events.every((e) => e.type === 'issuance.expired')).toBe(true)
    const stages = events.map((e) => (e.type === 'issuance.expired' ? e.stage : undefined))
    expect(stages.filter((stage) => stage === 'token_issued')).toHaveLength(ABANDONED)
    expect(stages.filter((stage) => stage === 'offered')).toHaveLength(OFFERS - ABANDONED)
    for (const call of receiver.received) expect(call.body).not.toContain('Erika')
  }, 120_000)
})
