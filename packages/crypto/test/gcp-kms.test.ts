import { createCipheriv, createPublicKey, generateKeyPairSync, verify } from 'node:crypto'
import type { JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { crc32c, createGcpKmsProvider, type GcpKmsOptions } from '../src/providers/gcp-kms'
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

  // Google's text for wrappedKey: "wrapped with the ephemeral AES-256 key using AES-KWP (RFC 5649)".
  // OpenSSL's wrap-pad ciphers with RFC 5649's IV, as gcp-kms-import.ts uses them, give RFC 5649 §6's
  // second example (its KEK is 192-bit; the AES-256 cipher differs in key size only).
  it('AES-KWP as wrapForImport uses it is RFC 5649 (its section 6 example, 20 octets)', () => {
    const kek = Buffer.from('5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8', 'hex')
    const kwp = createCipheriv('id-aes192-wrap-pad', kek, Buffer.from('a65959a6', 'hex'))
    const key = Buffer.from('c37b7e6492584340bed12207808941155068f738', 'hex')
    expect(Buffer.concat([kwp.update(key), kwp.final()]).toString('hex')).toBe(
      '138bdeaa9b8fa7fc61f97742e72248ee5ae6ae5360d1ae6a5f54f373fa543b6a',
    )
  })

  // Issue 40: "import where it allows". Cloud KMS imports through an import job (cryptoKeyVersions.import).
  describe('importKey', () => {
    const RING = 'projects/test-project/locations/europe-west3/keyRings/issuer'
    const importer = (more: Partial<GcpKmsOptions> = {}) =>
      createGcpKmsProvider({
        serviceAccount: gcp.serviceAccount,
        endpoint: gcp.endpoint,
        keyRing: RING,
        ...more,
      })
    const privateJwk = (namedCurve: string) =>
      generateKeyPairSync('ec', { namedCurve }).privateKey.export({ format: 'jwk' }) as JWK
    const publicOf = (jwk: JWK) => ({ kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y })

    for (const [alg, curve, method] of [
      ['ES256', 'P-256', undefined],
      ['ES384', 'P-384', 'RSA_OAEP_4096_SHA256'],
    ] as const) {
      it(`${alg} (${method ?? 'RSA_OAEP_3072_SHA256_AES_256, the default'}): an importOnly HSM key, an import job, the wrapped key imported; signatures verify with the known public key`, async () => {
        const jwk = privateJwk(curve)
        const hint = `tenant/chain/${alg.toLowerCase()}`
        const imported = await importer(method ? { importMethod: method } : {}).importKey?.(hint, jwk, alg)
        const cryptoKey = `${RING}/cryptoKeys/tenant-chain-${alg.toLowerCase()}`
        expect(imported).toStrictEqual({
          alg,
          publicJwk: publicOf(jwk),
          externalKeyId: `${cryptoKey}/cryptoKeyVersions/1`,
        })
        expect(gcp.created.at(-1)).toStrictEqual({
          name: cryptoKey,
          purpose: 'ASYMMETRIC_SIGN',
          algorithm: alg === 'ES256' ? 'EC_SIGN_P256_SHA256' : 'EC_SIGN_P384_SHA384',
          protectionLevel: 'HSM',
          importOnly: true,
        })
        expect(gcp.imported.at(-1)).toStrictEqual({
          name: `${cryptoKey}/cryptoKeyVersions/1`,
          algorithm: alg === 'ES256' ? 'EC_SIGN_P256_SHA256' : 'EC_SIGN_P384_SHA384',
          importJob: `${RING}/importJobs/tenant-chain-${alg.toLowerCase()}`,
          importMethod: method ?? 'RSA_OAEP_3072_SHA256_AES_256',
        })
        const data = encoder.encode('imported into cloud kms')
        const signature = await importer().sign(imported?.externalKeyId as string, alg, data)
        expect(verifies(publicOf(jwk), alg, data, signature)).toBe(true)
        // Only the wrapped form left this process: no request carries d.
        expect(JSON.stringify(gcp.requests)).not.toContain(jwk.d as string)
        // The local Cloud KMS makes a 4096-bit RSA wrapping key: seconds on a loaded machine.
      }, 60_000)
    }

    it('refusals: no key ring is misconfigured, a key of another curve refused, unwrapped material that fails is IMPORT_FAILED with its reason; no key material in messages', async () => {
      const jwk = privateJwk('P-256')
      const noRing = await createGcpKmsProvider({
        serviceAccount: gcp.serviceAccount,
        endpoint: gcp.endpoint,
      })
        .importKey?.('t/c/1', jwk, 'ES256')
        .catch((error) => error)
      expect([noRing.reason, noRing.message]).toStrictEqual([
        'misconfigured',
        'Cloud KMS: set GCP_KMS_KEY_RING to import keys',
      ])
      const curve = await importer()
        .importKey?.('t/c/2', privateJwk('P-384'), 'ES256')
        .catch((error) => error)
      expect([curve.reason, curve.message]).toStrictEqual([
        'refused',
        'Cloud KMS: the key is not a ES256 key',
      ])
      // The wrapped key altered on the way (its AES-KWP part): Cloud KMS cannot unwrap it.
      const tampering: typeof fetch = (url, init) => {
        const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined
        if (String(url).endsWith(':import') && body?.wrappedKey) {
          const bytes = Buffer.from(body.wrappedKey, 'base64')
          bytes[bytes.length - 1] = (bytes.at(-1) as number) ^ 1
          return fetch(url, {
            ...init,
            body: JSON.stringify({ ...body, wrappedKey: bytes.toString('base64') }),
          })
        }
        return fetch(url, init)
      }
      const failed = await importer({ fetch: tampering })
        .importKey?.('t/c/3', jwk, 'ES256')
        .catch((error) => error)
      const version = `${RING}/cryptoKeys/t-c-3/cryptoKeyVersions/1`
      expect([failed.reason, failed.message]).toStrictEqual([
        'refused',
        `Cloud KMS key '${version}': IMPORT_FAILED (The wrapped key material could not be unwrapped with the import job key.)`,
      ])
      expect(gcp.stateOf(version)).toBe('IMPORT_FAILED')
      // The same key id again: the crypto key exists (ALREADY_EXISTS is a refusal, not an outage).
      const again = await importer()
        .importKey?.('t/c/3', jwk, 'ES256')
        .catch((error) => error)
      expect([again.reason, again.message]).toStrictEqual([
        'refused',
        `Cloud KMS key '${RING}': ALREADY_EXISTS`,
      ])
      for (const error of [noRing, curve, failed, again]) expect(String(error.message)).not.toContain(jwk.d)
    })
  })
})
