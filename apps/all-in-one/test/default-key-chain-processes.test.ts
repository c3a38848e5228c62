import { randomBytes } from 'node:crypto'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientToken, type ServiceProcess, startDeployment } from './processes'

const databaseUrl = process.env.TEST_DATABASE_URL

/** A management call with a Bearer token; the status and the JSON body. */
const call = async (at: ServiceProcess, token: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${at.origin}/api${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

/** Whether `check` held within 30 s. */
async function until(check: () => Promise<boolean>): Promise<boolean> {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return false
}

/**
 * Issue 23 item 8: a credential configuration without `keyChainId` gets the tenant's default key
 * chain, created on first need. Two management processes on one PostgreSQL database take minimal
 * creates of a tenant without any key chain at the same moment: every create succeeds and they
 * all share one default key chain (the partial unique index decides, not a process's memory).
 */
describe.runIf(databaseUrl)('one default key chain across two management processes (PostgreSQL)', () => {
  const root = { id: `root-${crypto.randomUUID()}`, secret: 'default-key-chain-root-secret-0123456' }
  const processes: ServiceProcess[] = []
  let operator: string

  beforeAll(async () => {
    // One deployment behind one ingress: the same PUBLIC_URL, so a token of one process is good at the other.
    processes.push(
      ...(await startDeployment(databaseUrl as string, root, ['management', 'management'], {
        PUBLIC_URL: 'https://credentials.test',
      })),
    )
    operator = await clientToken((processes[0] as ServiceProcess).origin, root.id, root.secret)
  }, 120_000)

  afterAll(() => Promise.all(processes.map((p) => p.stop())))

  it('spec §2.1 minimal bodies at two processes at once: all created, one default key chain', async () => {
    const [a, b] = processes as [ServiceProcess, ServiceProcess]
    for (let round = 0; round < 3; round++) {
      const tenant = `dk-${randomBytes(4).toString('hex')}`
      expect((await call(a, operator, 'POST', '/tenants', { id: tenant, name: tenant })).status).toBe(201)
      const admin = { clientId: `${tenant}-admin`, clientSecret: 'default-key-chain-admin-secret-0123' }
      const created = await call(a, operator, 'POST', `/tenants/${tenant}/clients`, {
        ...admin,
        roles: ['issuance:config', 'key:manage'],
      })
      expect(created.status).toBe(201)
      const token = await clientToken(a.origin, admin.clientId, admin.clientSecret)
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          call(i % 2 ? b : a, token, 'POST', '/credentials', {
            id: `c${i}`,
            config: { format: 'dc+sd-jwt', vct: `urn:example:c${i}` },
            fields: [{ path: ['name'], type: 'string', mandatory: true, disclosable: true }],
          }),
        ),
      )
      expect(
        answers.map((answer) => answer.status),
        JSON.stringify(answers.map((answer) => answer.body)),
      ).toStrictEqual(Array(8).fill(201))
      expect(new Set(answers.map((answer) => answer.body.keyChainId))).toStrictEqual(new Set(['default']))
      const chains = (await call(b, token, 'GET', '/key-chains')).body.items as { id: string }[]
      expect(chains.map((chain) => chain.id)).toStrictEqual(['default'])
      expect((await call(b, operator, 'GET', `/tenants/${tenant}`)).body.defaultKeyChainId).toBe('default')
    }
  }, 90_000)
})

/**
 * Issue 36: concurrent first creates waited for the default key chain inside their transactions,
 * each holding a pooled connection, so the other requests of a small pool timed out (503). The
 * test makes that wait long: it holds a lock that stops inserts into key_chains (reads go on)
 * well past DATABASE_CONNECT_TIMEOUT_MS while twelve creates arrive at two processes with pools
 * of two. Only one create per process may wait holding a connection; the rest wait without one.
 */
describe.runIf(databaseUrl)('the default key chain’s first need on small pools (PostgreSQL)', () => {
  const root = { id: `root-${crypto.randomUUID()}`, secret: 'default-key-chain-root-secret-0123456' }
  const processes: ServiceProcess[] = []
  let admin: postgres.Sql

  beforeAll(async () => {
    // Two connections: one holds the lock; the other watches (a transaction sees one snapshot of pg_stat_activity).
    admin = postgres(databaseUrl as string, { max: 2, onnotice: () => {} })
    processes.push(
      ...(await startDeployment(databaseUrl as string, root, ['management', 'management'], {
        PUBLIC_URL: 'https://credentials.test',
        DATABASE_POOL_SIZE: '2',
        // The production default: a request waits up to 3 s for a pooled connection.
        DATABASE_CONNECT_TIMEOUT_MS: '3000',
      })),
    )
  }, 120_000)

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()))
    await admin?.end()
  })

  it('issue 36: twelve minimal creates at once while the first is held: all 201, no 503, one default', async () => {
    const [a, b] = processes as [ServiceProcess, ServiceProcess]
    const operator = await clientToken(a.origin, root.id, root.secret)
    const tenant = `dk-${randomBytes(4).toString('hex')}`
    expect((await call(a, operator, 'POST', '/tenants', { id: tenant, name: tenant })).status).toBe(201)
    const client = { clientId: `${tenant}-admin`, clientSecret: 'default-key-chain-admin-secret-0123' }
    const roles = ['issuance:config', 'key:manage']
    expect((await call(a, operator, 'POST', `/tenants/${tenant}/clients`, { ...client, roles })).status).toBe(
      201,
    )
    const token = await clientToken(a.origin, client.clientId, client.clientSecret)

    const locker = await admin.reserve()
    let answers: Awaited<ReturnType<typeof call>>[]
    try {
      await locker`begin`
      await locker`lock table key_chains in share row exclusive mode`
      const pending = Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          call(i % 2 ? b : a, token, 'POST', '/credentials', {
            id: `c${i}`,
            config: { format: 'dc+sd-jwt', vct: `urn:example:c${i}` },
            fields: [{ path: ['name'], type: 'string', mandatory: true, disclosable: true }],
          }),
        ),
      )
      // Both processes have a create waiting for the lock; then longer than a pool wait may last.
      const waiting = await until(async () => {
        const [row] = await admin`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`
        return ((row?.n as number) ?? 0) >= 2
      })
      expect(waiting, 'a create of each process waits for the lock').toBe(true)
      await new Promise((resolve) => setTimeout(resolve, 4000))
      await locker`commit`
      answers = await pending
    } finally {
      await locker`rollback`.catch(() => {})
      locker.release()
    }
    expect(
      answers.map((answer) => answer.status),
      JSON.stringify(answers.map((answer) => answer.body)),
    ).toStrictEqual(Array(12).fill(201))
    expect(new Set(answers.map((answer) => answer.body.keyChainId))).toStrictEqual(new Set(['default']))
    const chains = (await call(b, token, 'GET', '/key-chains')).body.items as { id: string }[]
    expect(chains.map((chain) => chain.id)).toStrictEqual(['default'])
  }, 90_000)
})
