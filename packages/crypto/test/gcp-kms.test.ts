import { createPublicKey, verify } from 'node:crypto'
import type { JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { crc32c, createGcpKmsProvider } from '../src/providers/gcp-kms'
import { hashFor, type SigningAlgorithm } from '../src/signer'
import { startFakeGcpKms } from '../src/testing/fake-gcp-kms'

const encoder = new TextEncoder()
const verifies = (jwk: JWK, alg: SigningAlgorithm, data: Uint8Array, signature: Uint8Array) =>
  verify(
    hashFor(alg),
    data,
    { key: createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' },
    signature,
  )
const version = (key: string, n = 1) =>
  `projects/test-project/locations/europe-west3/keyRings/issuer/cryptoKeys/${key}/cryptoKeyVersions/${n}`

describe('Google Cloud KMS provider', () => {
  let gcp: Awaited<ReturnType<typeof startFakeGcpKms>>
  const provider = () => createGcpKmsProvider({ serviceAccount: gcp.serviceAccount, endpoint: gcp.endpoint })
  beforeAll(async () => {
    gcp = await startFakeGcpKms()
  })
  afterAll(() => gcp.close())

  it('CRC32C is Castagnoli (RFC 3720 B.4 check value of "123456789": 0xE3069283)', () => {
    expect(crc32c(encoder.encode('123456789'))).toBe(0xe3069283)
  })

  for (const alg of ['ES256', 'ES384'] as const) {
    it(`${alg}: getPublicKey and asymmetricSign with the digest and CRC32C; the DER signature becomes JOSE r‖s`, async () => {
      const name = version(`pid-${alg.toLowerCase()}`)
      const held = await gcp.addKey(name, alg)
      const kms = provider()
      expect(await kms.describe(name)).toStrictEqual({ alg, publicJwk: held.publicJwk })
      const data = encoder.encode('hello gcp')
      const signature = await kms.sign(name, alg, data)
      expect(verifies(held.publicJwk, alg, data, signature)).toBe(true)
      const call = gcp.requests.findLast((r) => r.path.endsWith(':asymmetricSign'))
      expect(call?.body).toMatchObject({ digestCrc32c: expect.stringMatching(/^\d+$/) })
    })
  }

  it('a service-account assertion buys one token for many calls; an expired token is renewed once', async () => {
    const name = version('tokens')
    await gcp.addKey(name)
    const kms = provider()
    const tokenCalls = () => gcp.requests.filter((r) => r.path === '/token').length
    const before = tokenCalls()
    await Promise.all([kms.describe(name), kms.describe(name)])
    expect(tokenCalls() - before).toBe(1)
    gcp.expireTokens()
    await kms.describe(name)
    expect(tokenCalls() - before).toBe(2)
  })

  it('error shapes: NOT_FOUND is not_found, a disabled version refused, a bad name not_found, an unreachable endpoint unavailable', async () => {
    const kms = provider()
    const missing = await kms.describe(version('absent')).catch((error) => error)
    expect([missing.reason, missing.message]).toStrictEqual([
      'not_found',
      `Cloud KMS key '${version('absent')}': NOT_FOUND`,
    ])
    const disabled = version('disabled')
    await gcp.addKey(disabled)
    gcp.disable(disabled)
    const refused = await kms.sign(disabled, 'ES256', encoder.encode('x')).catch((error) => error)
    expect([refused.reason, refused.message]).toStrictEqual([
      'refused',
      `Cloud KMS key '${disabled}': FAILED_PRECONDITION`,
    ])
    expect((await kms.describe('projects/p/../../other').catch((error) => error)).reason).toBe('not_found')
    const dotted = 'projects/../locations/../keyRings/../cryptoKeys/../cryptoKeyVersions/1'
    expect((await kms.describe(dotted).catch((error) => error)).reason).toBe('not_found')
    const down = await createGcpKmsProvider({
      serviceAccount: { ...gcp.serviceAccount, token_uri: 'http://127.0.0.1:1/token' },
      endpoint: 'http://127.0.0.1:1',
    })
      .describe(version('any'))
      .catch((error) => error)
    expect(down.reason).toBe('unavailable')
  })
})
