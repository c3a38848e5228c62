import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ExternalAs, externalWallet, startExternalAs } from './external-as-fixtures'
import type { ServiceProcess } from './processes'
import { startTwoIssuers, type TwoIssuers } from './two-issuers'
import { holderProof } from './wallet'

const databaseUrl = process.env.TEST_DATABASE_URL

/**
 * Issue 41: an external server that issues single-use tokens (`singleUseTokens`). One DPoP-bound
 * token sent to two issuer processes on one PostgreSQL database at the same time: exactly one
 * request is issued, the other is `invalid_token`, and so is any later use (the token binds its
 * session through one unique key; RFC 9068 §5 leaves replay policy to the resource server).
 */
describe.runIf(databaseUrl)(
  'a single-use external token is spent once across two issuer processes (PostgreSQL)',
  () => {
    let deployment: TwoIssuers
    let as: ExternalAs

    beforeAll(async () => {
      as = await startExternalAs({
        resource: () => deployment.issuerId,
        format: 'jwt',
        subjectClaims: () => ({ given_name: 'Single' }),
      })
      deployment = await startTwoIssuers(databaseUrl as string, 'xt', ['key:manage', 'issuance:config'], {
        scope: 'pid',
      })
      await deployment.post('/auth-servers', {
        id: 'once',
        issuer: as.url,
        credentialConfigurationIds: ['pid'],
        singleUseTokens: true,
      })
    }, 120_000)

    afterAll(async () => {
      await deployment?.stop()
      await as?.close()
    })

    it('two requests with one token at two processes at once: one credential, one invalid_token; a later use is invalid_token', async () => {
      const { tenant, issuerId, issuers } = deployment
      const [a, b] = issuers
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
