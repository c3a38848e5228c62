import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ExternalAs, externalWallet, startExternalAs } from './external-as-fixtures'
import { clientToken, type ServiceProcess, startDeployment } from './processes'
import { holderProof } from './wallet'

const databaseUrl = process.env.TEST_DATABASE_URL
// One deployment behind one ingress: a token for the issuer is good at either issuer process.
const PUBLIC_URL = 'https://credentials.test'

/**
 * Issue 41: an external server that issues single-use tokens (`singleUseTokens`). One DPoP-bound
 * token sent to two issuer processes on one PostgreSQL database at the same time: exactly one
 * request is issued, the other is `invalid_token`, and so is any later use (the token binds its
 * session through one unique key; RFC 9068 §5 leaves replay policy to the resource server).
 */
describe.runIf(databaseUrl)(
  'a single-use external token is spent once across two issuer processes (PostgreSQL)',
  () => {
    const root = { id: `root-${crypto.randomUUID()}`, secret: 'external-token-root-secret-0123456789' }
    const tenant = `xt-${randomBytes(4).toString('hex')}`
    const issuerId = `${PUBLIC_URL}/issuers/${tenant}`
    const processes: ServiceProcess[] = []
    let as: ExternalAs

    beforeAll(async () => {
      as = await startExternalAs({
        resource: () => issuerId,
        format: 'jwt',
        subjectClaims: () => ({ given_name: 'Single' }),
      })
      processes.push(
        ...(await startDeployment(databaseUrl as string, root, ['management', 'issuer', 'issuer'], {
          PUBLIC_URL,
          RATE_LIMIT_WALLET_PER_MINUTE: '100000',
          OUTBOUND_ALLOW_HTTP: 'true',
          OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
        })),
      )
      const management = processes[0] as ServiceProcess
      const as_ = (token: string) => async (path: string, body: unknown) => {
        const response = await fetch(`${management.origin}/api${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify(body),
        })
        expect(response.status, `${path}: ${await response.clone().text()}`).toBe(201)
      }
      const operator = as_(await clientToken(management.origin, root.id, root.secret))
      await operator('/tenants', { id: tenant, name: tenant })
      const admin = { clientId: `${tenant}-admin`, clientSecret: 'external-token-admin-secret-0123' }
      await operator(`/tenants/${tenant}/clients`, { ...admin, roles: ['key:manage', 'issuance:config'] })
      const api = as_(await clientToken(management.origin, admin.clientId, admin.clientSecret))
      await api('/key-chains', { source: 'generate', id: 'keys' })
      await api('/credentials', {
        id: 'pid',
        config: { format: 'dc+sd-jwt', vct: 'urn:example:pid', scope: 'pid' },
        keyChainId: 'keys',
        fields: [{ path: ['given_name'], type: 'string', disclosable: true }],
      })
      await api('/auth-servers', {
        id: 'once',
        issuer: as.url,
        credentialConfigurationIds: ['pid'],
        singleUseTokens: true,
      })
    }, 120_000)

    afterAll(async () => {
      await Promise.all(processes.map((p) => p.stop()))
      await as?.close()
    })

    it('two requests with one token at two processes at once: one credential, one invalid_token; a later use is invalid_token', async () => {
      const [a, b] = processes.slice(1) as [ServiceProcess, ServiceProcess]
      const wallet = await externalWallet()
      const request = async (at: ServiceProcess, accessToken: string) => {
        const nonces = await fetch(`${at.origin}/issuers/${tenant}/nonce`, { method: 'POST' })
        const { c_nonce } = (await nonces.json()) as { c_nonce: string }
        const { proof } = await holderProof(issuerId, c_nonce)
        const dpopNonce = nonces.headers.get('dpop-nonce') ?? undefined
        const response = await fetch(`${at.origin}/issuers/${tenant}/credential`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `DPoP ${accessToken}`,
            dpop: await wallet.dpopProof('POST', `${issuerId}/credential`, accessToken, undefined, dpopNonce),
          },
          body: JSON.stringify({ credential_configuration_id: 'pid', proofs: { jwt: [proof] } }),
        })
        return { status: response.status, body: (await response.json()) as Record<string, unknown> }
      }
      for (let round = 0; round < 3; round++) {
        const token = await wallet.authorize(issuerId, { configurationId: 'pid', via: a.origin })
        const answers = await Promise.all([request(a, token.access_token), request(b, token.access_token)])
        const statuses = answers.map((answer) => answer.status).sort()
        expect(statuses, JSON.stringify(answers.map((answer) => answer.body))).toStrictEqual([200, 401])
        expect(answers.find((answer) => answer.status === 401)?.body.error).toBe('invalid_token')
        const later = await request(a, token.access_token)
        expect({ status: later.status, error: later.body.error }).toStrictEqual({
          status: 401,
          error: 'invalid_token',
        })
      }
    }, 60_000)
  },
)
