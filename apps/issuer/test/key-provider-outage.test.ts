import {
  startFakeAzureKeyVault,
  startFakeGcpKms,
  startFakeKms,
  startFakeVault,
} from '@credential-service/crypto/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readyToRequest, requestCredential, startIssuerWorld, type World } from './world'

const VAULT_TOKEN = 'outage-vault-token'
const AZURE = { tenantId: 'entra', clientId: 'issuer-app', clientSecret: 'outage-azure-secret' }
const GCP_VERSION = 'projects/p/locations/l/keyRings/r/cryptoKeys/outage/cryptoKeyVersions/1'
const AWS_KEY = 'arn:aws:kms:eu-west-1:111122223333:key/0b9c2a4e-1f5d-4c3b-9a8e-7d6f5e4c3b2a'

/**
 * Issue 40 item 3, "outage -> 503 with Retry-After on the wallet path and a clear 4xx/5xx on
 * management", for the network providers (the PKCS#11 token's is hsm-keys.test.ts): a credential
 * signed through Vault transit, AWS KMS, Azure Key Vault and Cloud KMS (their local wire
 * implementations), then each taken away: the credential endpoint answers 503
 * temporarily_unavailable with Retry-After, and the management API's rotation a 502 problem that
 * names the key chain.
 */
describe('the wallet path when a network key provider is down', () => {
  let world: World
  let vault: Awaited<ReturnType<typeof startFakeVault>>
  let kms: Awaited<ReturnType<typeof startFakeKms>>
  let azure: Awaited<ReturnType<typeof startFakeAzureKeyVault>>
  let gcp: Awaited<ReturnType<typeof startFakeGcpKms>>
  const aws = {
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY,
  }

  beforeAll(async () => {
    ;[vault, kms, azure, gcp] = await Promise.all([
      startFakeVault(VAULT_TOKEN),
      startFakeKms(),
      startFakeAzureKeyVault(AZURE),
      startFakeGcpKms(),
    ])
    // The AWS SDK's default chain reads the credentials from the process environment.
    process.env.AWS_ACCESS_KEY_ID = 'AKIDEXAMPLE'
    process.env.AWS_SECRET_ACCESS_KEY = 'outage-aws-secret'
    world = await startIssuerWorld({
      env: {
        VAULT_ADDR: vault.address,
        VAULT_TOKEN,
        AWS_REGION: 'eu-west-1',
        AWS_ENDPOINT_URL_KMS: kms.endpoint,
        AZURE_KEY_VAULT_URL: azure.url,
        AZURE_AUTHORITY_HOST: azure.url,
        AZURE_TENANT_ID: AZURE.tenantId,
        AZURE_CLIENT_ID: AZURE.clientId,
        AZURE_CLIENT_SECRET: AZURE.clientSecret,
        GCP_KMS_CREDENTIALS: 'env:TEST_GCP_SERVICE_ACCOUNT',
        TEST_GCP_SERVICE_ACCOUNT: JSON.stringify(gcp.serviceAccount),
        GCP_KMS_ENDPOINT: gcp.endpoint,
      },
    })
  })
  afterAll(async () => {
    await world?.close()
    for (const [name, value] of Object.entries(aws)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  })

  /** Each provider: the id of its key, registered by `add` in its local implementation, and how to take it away. */
  const PROVIDERS = {
    vault: {
      id: 'outage',
      add: () => vault.addKey('outage'),
      down: () => vault.close(),
    },
    'aws-kms': {
      id: AWS_KEY,
      add: () => kms.addKey(AWS_KEY),
      down: () => kms.close(),
    },
    'azure-key-vault': {
      id: 'outage',
      add: () => azure.addKey('outage'),
      down: () => azure.close(),
    },
    'gcp-kms': {
      id: GCP_VERSION,
      add: () => gcp.addKey(GCP_VERSION),
      down: () => gcp.close(),
    },
  }

  for (const [kmsProvider, provider] of Object.entries(PROVIDERS)) {
    it(`${kmsProvider}: signs a credential; down, the credential endpoint is 503 temporarily_unavailable with Retry-After and a rotation a 502 naming the key chain`, async () => {
      const { a } = world.tenants
      const keyChainId = `on-${kmsProvider}`
      const configuration = `pid-${kmsProvider}`
      await provider.add()
      const chain = await world.management.inject({
        method: 'POST',
        url: '/api/key-chains',
        headers: a.auth,
        payload: { id: keyChainId, source: 'external', kmsProvider, externalKeyId: provider.id },
      })
      expect(chain.statusCode, chain.body).toBe(201)
      const config = await world.management.inject({
        method: 'POST',
        url: '/api/credentials',
        headers: a.auth,
        payload: {
          id: configuration,
          config: { format: 'dc+sd-jwt', vct: `urn:example:${kmsProvider}` },
          fields: [
            { path: ['given_name'], type: 'string', mandatory: true, disclosable: true },
            { path: ['family_name'], type: 'string', mandatory: true, disclosable: true },
          ],
          keyChainId,
        },
      })
      expect(config.statusCode, config.body).toBe(201)
      const [up, later] = [
        await readyToRequest(world, 'a', configuration),
        await readyToRequest(world, 'a', configuration),
      ]
      const signed = await requestCredential(world, a.id, up.accessToken, up.body)
      expect(signed.statusCode, signed.body).toBe(200)

      await provider.down()
      const down = await requestCredential(world, a.id, later.accessToken, later.body)
      expect(down.statusCode).toBe(503)
      expect(down.headers['retry-after']).toBe('5')
      expect(down.json()).toStrictEqual({
        error: 'temporarily_unavailable',
        error_description: 'the signing key is unavailable; retry later',
      })
      const rotated = await world.management.inject({
        method: 'POST',
        url: `/api/key-chains/${keyChainId}/rotate`,
        headers: a.auth,
        payload: {},
      })
      expect(rotated.statusCode).toBe(502)
      expect(rotated.headers['content-type']).toContain('application/problem+json')
      expect(rotated.json().detail).toContain(`key chain '${keyChainId}'`)
      for (const body of [down.body, rotated.body]) {
        for (const secret of [VAULT_TOKEN, AZURE.clientSecret, 'outage-aws-secret', 'PRIVATE KEY']) {
          expect(body).not.toContain(secret)
        }
      }
    })
  }
})
