import { createHash, randomBytes } from 'node:crypto'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ServiceProcess, startDeployment, tenantAdmin } from './processes'
import { issueOverHttp, presentSdJwt } from './wallet'

const databaseUrl = process.env.TEST_DATABASE_URL
const VCT = 'urn:example:pid'
const NS = 'org.iso.18013.5.1'

/**
 * Issue 26: an Interactive Authorization follow-up is answered once (OpenID4VCI 1.1 §"Preventing
 * Session Fixation Attacks", FiPA -03 §5.2.2: the auth_session is single use): the same follow-up at
 * two issuer processes at the same moment gives exactly one authorization_code. Issue 44: the code
 * is spent by the token request's one statement, which locks it: the same code at two processes at
 * once gives one token (RFC 6749 §4.1.2, single use), and the second use revokes the grant. All processes on one
 * PostgreSQL database, behind one ingress: PUBLIC_URL is the first issuer process's origin.
 */
describe.runIf(databaseUrl)(
  'issue 26: an Interactive Authorization follow-up answered once across two issuer processes (PostgreSQL)',
  () => {
    const root = { id: `root-${crypto.randomUUID()}`, secret: 'ia-processes-root-secret-0123456789' }
    const tenant = `ia-${randomBytes(4).toString('hex')}`
    const processes: ServiceProcess[] = []
    let management: ServiceProcess
    let auth: Record<string, string>

    beforeAll(async () => {
      const [issuer] = await startDeployment(databaseUrl as string, root, ['issuer'], {
        RATE_LIMIT_WALLET_PER_MINUTE: '100000',
      })
      processes.push(issuer as ServiceProcess)
      processes.push(
        ...(await startDeployment(databaseUrl as string, root, ['management', 'issuer'], {
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
      ])
      auth = admin.auth
      const api = admin.post
      await api('/key-chains', {
        source: 'generate',
        id: 'keys',
        certificate: { mode: 'internal-ca', subject: 'CN=IA processes,C=DE' },
      })
      await api('/credentials', {
        id: 'pid',
        config: { format: 'dc+sd-jwt', vct: VCT },
        keyChainId: 'keys',
        fields: [{ path: ['family_name'], type: 'string', disclosable: true }],
      })
      await api('/presentations', {
        id: 'pid-login',
        responseMode: 'direct_post',
        keyChainId: 'keys',
        dcqlQuery: {
          credentials: [
            {
              id: 'pid',
              format: 'dc+sd-jwt',
              meta: { vct_values: [VCT] },
              claims: [{ path: ['family_name'] }],
            },
          ],
        },
      })
      await api('/login-providers', {
        id: 'pid-login',
        kind: 'presentation',
        presentationConfigId: 'pid-login',
      })
      await api('/credentials', {
        id: 'mdl',
        config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
        keyChainId: 'keys',
        fields: [{ path: ['family_name'], type: 'string', namespace: NS, mandatory: true }],
        userAuthentication: {
          loginProviderId: 'pid-login',
          claims: { [`${NS}.family_name`]: ['family_name'] },
        },
      })
    }, 120_000)

    afterAll(() => Promise.all(processes.map((p) => p.stop())))

    // Issue 37 (V-36): the earlier IAE form shares the auth_session storage, so the same holds there.
    const forms = [
      {
        form: 'FiPA §5.2.2',
        path: 'authorize-challenge',
        types: 'urn:openid:dcp:ia:openid4vp_presentation',
        challenged: 401,
        prefix: 'ia:',
        code: 'authorization_code',
      },
      {
        form: 'IAE §"Follow-up Request"',
        path: 'interactive-authorization',
        types: 'openid4vp_presentation',
        challenged: 200,
        prefix: 'iae:',
        code: 'code',
      },
    ]
    it.each(forms)(
      '$form, §"Preventing Session Fixation Attacks": the same follow-up at two issuer processes at once: one code, the other invalid_session; the code at both at once: one token (RFC 6749 §4.1.2)',
      async (wire) => {
        const [first, , second] = processes as [ServiceProcess, ServiceProcess, ServiceProcess]
        const path = `/issuers/${tenant}/${wire.path}`
        const form = (body: Record<string, string>) => ({
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(body),
        })
        for (let round = 0; round < 3; round++) {
          const verifier = randomBytes(32).toString('base64url')
          const { credential, holder } = await issueOverHttp({
            apiBase: management.origin,
            auth,
            configurationId: 'pid',
            claims: { family_name: 'Mustermann' },
          })
          const initial = await fetch(
            `${first.origin}${path}`,
            form({
              response_type: 'code',
              client_id: 'wallet-1',
              code_challenge: createHash('sha256').update(verifier).digest('base64url'),
              code_challenge_method: 'S256',
              scope: 'mdl',
              interaction_types_supported: wire.types,
            }),
          )
          // biome-ignore lint/suspicious/noExplicitAny: protocol answers are read loosely in tests
          const challenge = (await initial.json()) as any
          expect(initial.status, JSON.stringify(challenge)).toBe(wire.challenged)
          const request = decodeJwt(challenge.openid4vp_request.request)
          const vp = await presentSdJwt({
            credential,
            holder,
            disclose: { family_name: true },
            nonce: request.nonce as string,
            aud: `${wire.prefix}${first.origin}`,
          })
          const followUp = {
            auth_session: challenge.auth_session,
            openid4vp_response: JSON.stringify({ vp_token: { pid: [vp] } }),
          }
          const answers = await Promise.all(
            [first, second].map(async (issuer) => {
              const response = await fetch(`${issuer.origin}${path}`, form(followUp))
              return { status: response.status, body: (await response.json()) as Record<string, unknown> }
            }),
          )
          expect(answers.map((a) => a.status).sort()).toStrictEqual([200, 400])
          expect(answers.filter((a) => typeof a.body[wire.code] === 'string')).toHaveLength(1)
          expect(answers.find((a) => a.status === 400)?.body.error).toBe('invalid_session')
          const code = answers.map((a) => a.body[wire.code]).find((c) => typeof c === 'string') as string
          const tokens = await Promise.all(
            [first, second].map(async (issuer) => {
              const response = await fetch(
                `${issuer.origin}/issuers/${tenant}/token`,
                form({
                  grant_type: 'authorization_code',
                  code,
                  code_verifier: verifier,
                  client_id: 'wallet-1',
                }),
              )
              return { status: response.status, body: (await response.json()) as Record<string, unknown> }
            }),
          )
          expect(tokens.map((t) => t.status).sort(), JSON.stringify(tokens)).toStrictEqual([200, 400])
          expect(tokens.filter((t) => typeof t.body.access_token === 'string')).toHaveLength(1)
          expect(tokens.find((t) => t.status === 400)?.body.error).toBe('invalid_grant')
        }
      },
      60_000,
    )
  },
)
