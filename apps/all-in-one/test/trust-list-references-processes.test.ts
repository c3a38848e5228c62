import { randomBytes } from 'node:crypto'
import { issueTestCertificate } from '@credential-service/crypto/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientToken, type ServiceProcess, startDeployment } from './processes'

const databaseUrl = process.env.TEST_DATABASE_URL

/**
 * Issue 25: a trust list is deleted at one management process while another saves a presentation
 * configuration naming it. The save locks the named list (FOR SHARE) until it commits and the
 * delete locks it FOR UPDATE, so one of them waits: either the save wins and the delete is a 409,
 * or the delete wins and the save is a 422. Never both: no configuration names a missing list.
 */
describe.runIf(databaseUrl)(
  'trust list delete against a save naming it, two management processes (PostgreSQL)',
  () => {
    const root = { id: `root-${crypto.randomUUID()}`, secret: 'trust-list-references-root-secret-01' }
    const processes: ServiceProcess[] = []
    let token: string
    let pem: string
    let keyChainId: string

    const call = async (at: ServiceProcess, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${at.origin}/api${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      return { status: response.status, body: await response.text() }
    }

    beforeAll(async () => {
      processes.push(
        ...(await startDeployment(databaseUrl as string, root, ['management', 'management'], {
          PUBLIC_URL: 'https://credentials.test',
        })),
      )
      const [a] = processes as [ServiceProcess]
      const operator = await clientToken(a.origin, root.id, root.secret)
      const tenant = `tlr-${randomBytes(4).toString('hex')}`
      const admin = { clientId: `${tenant}-admin`, clientSecret: 'trust-list-references-admin-secret-01' }
      token = operator
      expect((await call(a, 'POST', '/tenants', { id: tenant, name: tenant })).status).toBe(201)
      const client = await call(a, 'POST', `/tenants/${tenant}/clients`, {
        ...admin,
        roles: ['presentation:config', 'key:manage'],
      })
      expect(client.status).toBe(201)
      token = await clientToken(a.origin, admin.clientId, admin.clientSecret)
      const chain = await call(a, 'POST', '/key-chains', { source: 'generate' })
      expect(chain.status).toBe(201)
      keyChainId = JSON.parse(chain.body).id
      pem = (await issueTestCertificate({ subject: 'CN=PID Provider CA,C=DE', ca: true })).pem
    }, 120_000)

    afterAll(() => Promise.all(processes.map((p) => p.stop())))

    it('issue 25: in every round one of the two wins, and a stored configuration never names a deleted list', async () => {
      const [a, b] = processes as [ServiceProcess, ServiceProcess]
      for (let round = 0; round < 8; round++) {
        const list = `tl-${round}-${randomBytes(3).toString('hex')}`
        const config = `pc-${round}-${randomBytes(3).toString('hex')}`
        expect(
          (await call(a, 'POST', '/trust-lists', { id: list, source: { type: 'pem', certificates: [pem] } }))
            .status,
        ).toBe(201)
        // Alternate which process deletes, so neither always starts first.
        const [deleter, saver] = round % 2 ? [a, b] : [b, a]
        const [deleted, saved] = await Promise.all([
          call(deleter, 'DELETE', `/trust-lists/${list}`),
          call(saver, 'POST', '/presentations', {
            id: config,
            keyChainId,
            trustListIds: [list],
            dcqlQuery: {
              credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:eudi:pid:1'] } }],
            },
          }),
        ])
        const outcome = `${deleted.status}/${saved.status}`
        expect(['204/422', '409/201']).toContain(outcome)
        const listNow = await call(a, 'GET', `/trust-lists/${list}`)
        const configNow = await call(a, 'GET', `/presentations/${config}`)
        if (configNow.status === 200) {
          expect(JSON.parse(configNow.body).trustListIds).toStrictEqual([list])
          expect(listNow.status).toBe(200)
        } else {
          expect(listNow.status).toBe(404)
        }
      }
    }, 120_000)

    it('issue 36: the bound of 20 fetched lists per tenant holds when two processes create at once', async () => {
      const [a, b] = processes as [ServiceProcess, ServiceProcess]
      const fetched = (id: string) => ({
        id,
        source: { type: 'etsi-tl', url: `https://lists.example/${id}.xml`, signerCertificates: [pem] },
      })
      const answers = await Promise.all(
        Array.from({ length: 26 }, (_, n) =>
          call(
            n % 2 ? a : b,
            'POST',
            '/trust-lists',
            fetched(`fetched-${n}-${randomBytes(3).toString('hex')}`),
          ),
        ),
      )
      const statuses = answers.map((answer) => answer.status)
      expect(
        statuses.filter((status) => status === 201),
        JSON.stringify(answers),
      ).toHaveLength(20)
      expect(statuses.filter((status) => status === 409)).toHaveLength(6)
      const held = JSON.parse((await call(a, 'GET', '/trust-lists?limit=100')).body).items as {
        source: { type: string }
      }[]
      expect(held.filter((list) => list.source.type !== 'pem')).toHaveLength(20)
    }, 60_000)
  },
)
