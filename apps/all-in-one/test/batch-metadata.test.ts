import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { setGlobalConfig } from '@openid4vc/oauth2'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { type AllInOne, startAllInOne, tenantAdmin } from './harness'
import { interopWallet, type Loose } from './issuer-fixture'

setGlobalConfig({ allowInsecureUrls: true })

describe('OpenID4VCI 1.0 §12.2.4, §8.2 (checklist I-12, I-63, S-27): a wallet that follows batch_size is served by every configuration', () => {
  let app: FastifyInstance
  let started: AllInOne
  let baseUrl: string

  beforeAll(async () => {
    const port = await freePort()
    baseUrl = `http://127.0.0.1:${port}`
    started = await startAllInOne(testDatabases().at(-1) as TestDatabase, baseUrl)
    app = started.app
    await app.listen({ host: '127.0.0.1', port })
  })
  afterAll(() => app?.close())

  /** A tenant with one key-bound SD-JWT VC configuration `c<batchSize>` per batch size. */
  async function tenantWith(batchSizes: number[]) {
    const tenant = `batch-${crypto.randomUUID().slice(0, 8)}`
    const { admin } = await tenantAdmin(app, started, tenant, [
      'key:manage',
      'issuance:config',
      'issuance:offer',
    ])
    const post = async (url: string, payload: Record<string, unknown>) => {
      const response = await app.inject({ method: 'POST', url, headers: admin, payload })
      expect(response.statusCode, response.body).toBe(201)
      return response.json() as Loose
    }
    await post('/api/key-chains', { source: 'generate', id: 'keys' })
    for (const batchSize of batchSizes) {
      await post('/api/credentials', {
        id: `c${batchSize}`,
        config: { format: 'dc+sd-jwt', vct: `urn:example:c${batchSize}` },
        keyChainId: 'keys',
        batchSize,
        fields: [{ path: ['given_name'], type: 'string' }],
      })
    }
    const offer = async (configurationId: string) =>
      (
        await post('/api/offers', {
          credentialConfigurationIds: [configurationId],
          claims: { [configurationId]: { given_name: 'Erika' } },
        })
      ).offerUri as string
    return { offer }
  }

  /**
   * oid4vc-ts takes an offer of `configurationId` and sends as many proofs, each with its own key,
   * as the metadata's batch_size allows (it refuses to send more itself): the HTTP status and the
   * number of credentials it got.
   */
  async function followMetadata(offerUri: string, configurationId: string) {
    const { client, publicJwk, addKey } = await interopWallet()
    const credentialOffer = await client.resolveCredentialOffer(offerUri)
    const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer)
    const batchSize = issuerMetadata.credentialIssuer.batch_credential_issuance?.batch_size ?? 1
    const { accessTokenResponse } = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
      credentialOffer,
      issuerMetadata,
    })
    const { c_nonce } = await client.requestNonce({ issuerMetadata })
    const keys = [publicJwk]
    while (keys.length < batchSize) keys.push(await addKey())
    const proofs = await Promise.all(
      keys.map(
        async (jwk) =>
          (
            await client.createCredentialRequestJwtProof({
              issuerMetadata,
              credentialConfigurationId: configurationId,
              nonce: c_nonce,
              signer: { method: 'jwk', alg: 'ES256', publicJwk: jwk as never },
            })
          ).jwt,
      ),
    )
    const result = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: accessTokenResponse.access_token,
      credentialConfigurationId: configurationId,
      proofs: { jwt: proofs },
    })
    return {
      batchSize,
      status: result.response.status,
      credentials: (result.credentialResponse?.credentials as unknown[] | undefined)?.length,
    }
  }

  it('§12.2.4: configurations of batchSize 2 and 3 advertise batch_size 2, and each issues 2 credentials for 2 proofs', async () => {
    const { offer } = await tenantWith([2, 3])
    for (const id of ['c2', 'c3']) {
      expect(await followMetadata(await offer(id), id), id).toStrictEqual({
        batchSize: 2,
        status: 200,
        credentials: 2,
      })
    }
  })

  it('I-12: with a configuration of batchSize 1 the metadata offers no batch issuance; one proof to each configuration succeeds', async () => {
    const { offer } = await tenantWith([1, 3])
    for (const id of ['c1', 'c3']) {
      expect(await followMetadata(await offer(id), id), id).toStrictEqual({
        batchSize: 1,
        status: 200,
        credentials: 1,
      })
    }
  })
})
