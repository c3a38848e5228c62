import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { setGlobalConfig } from '@openid4vc/oauth2'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { startAllInOneWorld } from './harness'
import { interopWallet, type Loose } from './issuer-fixture'

setGlobalConfig({ allowInsecureUrls: true })

describe('OpenID4VCI 1.0 §12.2.4, §8.2 (checklist I-12, I-63, S-27): a wallet that follows batch_size is served by every configuration', () => {
  let app: FastifyInstance
  let admins: { a: Record<string, string>; b: Record<string, string> }

  beforeAll(async () => {
    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    // The `batch` world (test/worlds/batch): a key-bound configuration `c<batchSize>` per batch
    // size, 2 and 3 in tenant a, 1 and 3 in tenant b.
    const started = await startAllInOneWorld(testDatabases().at(-1) as TestDatabase, 'batch', baseUrl)
    app = started.app
    await app.listen({ host: '127.0.0.1', port })
    admins = { a: started.tenants.a.auth, b: started.tenants.b.auth }
  })
  afterAll(() => app?.close())

  /** The URI of a new offer of `configurationId` by tenant `tenant` of the world. */
  async function offer(tenant: 'a' | 'b', configurationId: string) {
    const response = await app.inject({
      method: 'POST',
      url: '/api/offers',
      headers: admins[tenant],
      payload: {
        credentialConfigurationIds: [configurationId],
        claims: { [configurationId]: { given_name: 'Erika' } },
      },
    })
    expect(response.statusCode, response.body).toBe(201)
    return (response.json() as Loose).offerUri as string
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
    for (const id of ['c2', 'c3']) {
      expect(await followMetadata(await offer('a', id), id), id).toStrictEqual({
        batchSize: 2,
        status: 200,
        credentials: 2,
      })
    }
  })

  it('I-12: with a configuration of batchSize 1 the metadata offers no batch issuance; one proof to each configuration succeeds', async () => {
    for (const id of ['c1', 'c3']) {
      expect(await followMetadata(await offer('b', id), id), id).toStrictEqual({
        batchSize: 1,
        status: 200,
        credentials: 1,
      })
    }
  })
})
