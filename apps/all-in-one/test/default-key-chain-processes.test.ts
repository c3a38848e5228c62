import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientToken, type ServiceProcess, startDeployment } from './processes'

const databaseUrl = process.env.TEST_DATABASE_URL

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

  const call = async (at: ServiceProcess, token: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${at.origin}/api${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }

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
