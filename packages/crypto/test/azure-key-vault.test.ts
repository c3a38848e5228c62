import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto'
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

  // Import Key (PUT /keys/{name}, api-version 7.4): "If the named key already exists, Azure Key
  // Vault creates a new version of the key."
  it('importKey: PUT /keys/{name} with the private JWK and Hsm; the answer is the public part, pinned; signatures verify', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-384' })
    const jwk = privateKey.export({ format: 'jwk' }) as JWK
    const publicJwk = { kty: 'EC', crv: 'P-384', x: jwk.x, y: jwk.y }
    const kv = provider()
    const first = await kv.importKey?.('tenant/chain/0a1b', jwk, 'ES384')
    expect(first).toStrictEqual({
      alg: 'ES384',
      publicJwk,
      externalKeyId: expect.stringMatching(/^tenant-chain-0a1b\/[0-9a-f]{32}$/),
    })
    const put = azure.requests.findLast((r) => r.method === 'PUT')
    expect(put).toMatchObject({
      path: '/keys/tenant-chain-0a1b',
      body: { key: { kty: 'EC', crv: 'P-384', d: jwk.d, key_ops: ['sign', 'verify'] }, Hsm: true },
    })
    expect(azure.imported.at(-1)).toStrictEqual({
      name: 'tenant-chain-0a1b',
      hsm: true,
      crv: 'P-384',
      exportable: false,
    })
    const data = encoder.encode('imported')
    const signature = await kv.sign(first?.externalKeyId as string, 'ES384', data)
    expect(verifies(publicJwk, 'ES384', data, signature)).toBe(true)
    // The same name again: a new version, the first one still there.
    const second = await kv.importKey?.('tenant/chain/0a1b', jwk, 'ES384')
    expect(second?.externalKeyId).not.toBe(first?.externalKeyId)
    expect((await kv.describe(first?.externalKeyId as string)).publicJwk).toStrictEqual(publicJwk)
  })

  it('importKey refusals: a standard vault refuses an HSM key (misconfigured), a d that is not the key of x/y is BadParameter; no key material in messages', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const jwk = privateKey.export({ format: 'jwk' }) as JWK
    const standard = await startFakeAzureKeyVault(credentials, 'standard')
    try {
      const refused = await createAzureKeyVaultProvider({
        vaultUrl: standard.url,
        authorityHost: standard.url,
        ...credentials,
      })
        .importKey?.('hsm-key', jwk, 'ES256')
        .catch((error) => error)
      expect([refused.reason, refused.message]).toStrictEqual([
        'misconfigured',
        "Azure Key Vault key 'hsm-key': Forbidden",
      ])
      // Software-protected keys (AZURE_KEY_VAULT_KEY_TYPE=EC) are what a standard vault holds.
      const software = await createAzureKeyVaultProvider({
        vaultUrl: standard.url,
        authorityHost: standard.url,
        keyType: 'EC',
        ...credentials,
      }).importKey?.('soft-key', jwk, 'ES256')
      expect(software?.publicJwk).toMatchObject({ x: jwk.x, y: jwk.y })
      expect(standard.imported).toStrictEqual([
        { name: 'soft-key', hsm: false, crv: 'P-256', exportable: false },
      ])
    } finally {
      await standard.close()
    }
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' })
    const mismatched = await provider()
      .importKey?.('mismatch', { ...jwk, d: other.d }, 'ES256')
      .catch((error) => error)
    expect([mismatched.reason, mismatched.message]).toStrictEqual([
      'refused',
      "Azure Key Vault key 'mismatch': BadParameter",
    ])
    for (const error of [mismatched]) expect(String(error.message)).not.toContain(String(jwk.d))
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
