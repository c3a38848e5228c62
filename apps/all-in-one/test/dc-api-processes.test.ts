import { randomBytes } from 'node:crypto'
import { setGlobalConfig } from '@openid4vc/oauth2'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { answerOverDcApi, type DcApiEntry } from './oid4vp-wallet'
import { type ServiceProcess, startDeployment, tenantAdmin } from './processes'
import { issueOverHttp, presentSdJwt } from './wallet'

setGlobalConfig({ allowInsecureUrls: true })
const databaseUrl = process.env.TEST_DATABASE_URL
const ORIGIN = 'https://rp.example'
const VCT = 'urn:example:pid'

/**
 * A Digital Credentials API answer is accepted once (OpenID4VP 1.0 Appendix A, one answer per
 * request): the same answer posted to two verifier processes at the same moment verifies the
 * session once; the other process refuses it. All processes on one PostgreSQL database, behind one
 * ingress: PUBLIC_URL is the issuer process's origin, so offers and credentials name it.
 */
describe.runIf(databaseUrl)(
  'a dc-api answer accepted once across two verifier processes (PostgreSQL)',
  () => {
    const root = { id: `root-${crypto.randomUUID()}`, secret: 'dc-api-processes-root-secret-01234567' }
    const tenant = `dc-${randomBytes(4).toString('hex')}`
    const processes: ServiceProcess[] = []
    let management: ServiceProcess
    let auth: Record<string, string>

    beforeAll(async () => {
      const [issuer] = await startDeployment(databaseUrl as string, root, ['issuer'])
      processes.push(issuer as ServiceProcess)
      processes.push(
        ...(await startDeployment(databaseUrl as string, root, ['management', 'verifier', 'verifier'], {
          PUBLIC_URL: (issuer as ServiceProcess).origin,
          OUTBOUND_ALLOW_HTTP: 'true',
          RATE_LIMIT_WALLET_PER_MINUTE: '100000',
        })),
      )
      management = processes[1] as ServiceProcess
      const admin = await tenantAdmin(management.origin, root, tenant, [
        'key:manage',
        'issuance:config',
        'issuance:offer',
        'presentation:config',
        'presentation:request',
      ])
      auth = admin.auth
      const api = admin.post
      await api('/key-chains', { source: 'generate', id: 'keys' })
      await api('/credentials', {
        id: 'pid',
        config: { format: 'dc+sd-jwt', vct: VCT },
        keyChainId: 'keys',
        fields: [{ path: ['given_name'], type: 'string', disclosable: true }],
      })
      await api('/presentations', {
        id: 'dc-pid',
        dcqlQuery: {
          credentials: [
            {
              id: 'pid',
              format: 'dc+sd-jwt',
              meta: { vct_values: [VCT] },
              claims: [{ path: ['given_name'] }],
            },
          ],
        },
        keyChainId: 'keys',
        dcApi: { origins: [ORIGIN] },
      })
    }, 120_000)

    afterAll(() => Promise.all(processes.map((p) => p.stop())))

    const managementApi = (path: string, body?: unknown) =>
      fetch(`${management.origin}/api${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).then(async (response) => (await response.json()) as Record<string, unknown>)

    it('OpenID4VP 1.0 Appendix A: the same answer at two verifier processes at once: one verifies, the other is refused', async () => {
      const [a, b] = processes.slice(2) as [ServiceProcess, ServiceProcess]
      for (let round = 0; round < 3; round++) {
        const { credential, holder } = await issueOverHttp({
          apiBase: management.origin,
          auth,
          configurationId: 'pid',
          claims: { given_name: 'Erika' },
        })
        const created = (await managementApi('/presentation-requests', {
          presentationConfigId: 'dc-pid',
          transport: 'dc-api',
          origin: ORIGIN,
        })) as { sessionId: string; dcApi: { requests: DcApiEntry[]; responseUri: string } }
        const unsigned = created.dcApi.requests.find((entry) => entry.protocol === 'openid4vp-v1-unsigned')
        const answer = await answerOverDcApi(unsigned as DcApiEntry, ORIGIN, async (request, aud) => ({
          pid: [
            await presentSdJwt({
              credential,
              holder,
              disclose: { given_name: true },
              nonce: request.nonce as string,
              aud,
            }),
          ],
        }))
        const path = new URL(created.dcApi.responseUri).pathname
        const statuses = await Promise.all(
          [a, b].map(async (verifier) => {
            const response = await fetch(`${verifier.origin}${path}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(answer),
            })
            return response.status
          }),
        )
        expect(statuses.sort()).toStrictEqual([200, 400])
        expect(await managementApi(`/sessions/${created.sessionId}`)).toMatchObject({
          status: 'verified',
          claims: { pid: [{ given_name: 'Erika' }] },
        })
      }
    }, 60_000)
  },
)
