import { createPublicKey, verify } from 'node:crypto'
import type { JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAzureKeyVaultProvider } from '../src/providers/azure-key-vault'
import { hashFor, type SigningAlgorithm } from '../src/signer'
import { startFakeAzureKeyVault } from '../src/testing/fake-azure-key-vault'

const credentials = { tenantId: 'tenant-1', clientId: 'issuer-app', clientSecret: 'client-secret-value' }
const encoder = new TextEncoder()
const verifies = (jwk: JWK, alg: SigningAlgorithm, data: Uint8Array, signature: Uint8Array) =>
  verify(
    hashFor(alg),
    data,
    { key: createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
    signature,
  )

describe('Azure Key Vault provider', () => {
  let azure: Awaited<ReturnType<typeof startFakeAzureKeyVault>>
  const provider = (overrides: Partial<typeof credentials> = {}) =>
    createAzureKeyVaultProvider({
      vaultUrl: azure.url,
      authorityHost: azure.url,
      ...credentials,
      ...overrides,
    })
  beforeAll(async () => {
    azure = await startFakeAzureKeyVault(credentials)
  })
  afterAll(() => azure.close())

  for (const alg of ['ES256', 'ES384'] as const) {
    it(`${alg}: describe pins the current version; sign posts the digest and the signature verifies`, async () => {
      const held = await azure.addKey(`issuer-${alg}`, alg)
      const kv = provider()
      expect(await kv.describe(`issuer-${alg}`)).toStrictEqual({
        alg,
        publicJwk: held.publicJwk,
        externalKeyId: `issuer-${alg}/${held.version}`,
      })
      const data = encoder.encode('hello azure')
      const signature = await kv.sign(`issuer-${alg}/${held.version}`, alg, data)
      expect(verifies(held.publicJwk, alg, data, signature)).toBe(true)
      const call = azure.requests.findLast((r) => r.path.endsWith('/sign'))
      expect(call).toMatchObject({ path: `/keys/issuer-${alg}/${held.version}/sign`, body: { alg } })
    })
  }

  it('a pinned version keeps signing after the key is rotated in the vault; unpinned names the current one', async () => {
    const first = await azure.addKey('rotating')
    const kv = provider()
    const pinned = (await kv.describe('rotating')).externalKeyId as string
    const second = await azure.rotate('rotating')
    const data = encoder.encode('pinned')
    expect(verifies(first.publicJwk, 'ES256', data, await kv.sign(pinned, 'ES256', data))).toBe(true)
    expect(kv.unpinned?.(pinned)).toBe('rotating')
    expect(await kv.describe('rotating')).toMatchObject({
      publicJwk: second.publicJwk,
      externalKeyId: `rotating/${second.version}`,
    })
  })

  it('one client-credentials token serves many calls; an expired one is renewed once', async () => {
    await azure.addKey('tokens')
    const kv = provider()
    const tokenCalls = () => azure.requests.filter((r) => r.path.endsWith('/oauth2/v2.0/token')).length
    const before = tokenCalls()
    await Promise.all([kv.describe('tokens'), kv.describe('tokens'), kv.describe('tokens')])
    expect(tokenCalls() - before).toBe(1)
    expect(azure.requests.findLast((r) => r.path.endsWith('/token'))?.body).toMatchObject({
      grant_type: 'client_credentials',
      scope: 'https://vault.azure.net/.default',
    })
    azure.expireTokens()
    await kv.describe('tokens')
    expect(tokenCalls() - before).toBe(2)
  })

  it('error shapes: KeyNotFound is not_found, a refused secret misconfigured, an unreachable vault unavailable; no secret in messages', async () => {
    const missing = await provider()
      .describe('absent')
      .catch((error) => error)
    expect([missing.reason, missing.message]).toStrictEqual([
      'not_found',
      "Azure Key Vault key 'absent': KeyNotFound",
    ])
    const refused = await provider({ clientSecret: 'wrong-secret' })
      .describe('absent')
      .catch((error) => error)
    expect([refused.reason, refused.message]).toStrictEqual([
      'misconfigured',
      'Azure token request refused: invalid_client',
    ])
    const down = await createAzureKeyVaultProvider({
      vaultUrl: 'http://127.0.0.1:1',
      authorityHost: 'http://127.0.0.1:1',
      ...credentials,
    })
      .sign('k/1', 'ES256', encoder.encode('x'))
      .catch((error) => error)
    expect([down.reason, down.message]).toStrictEqual([
      'unavailable',
      'the Azure token authority http://127.0.0.1:1 is unreachable',
    ])
    for (const error of [missing, refused, down]) expect(String(error.message)).not.toContain('secret')
    const path = await provider()
      .describe('../../other-host')
      .catch((error) => error)
    expect(path.reason).toBe('not_found')
  })
})
