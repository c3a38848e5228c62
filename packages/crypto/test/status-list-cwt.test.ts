import { createPrivateKey, createPublicKey } from 'node:crypto'
import { deflateSync } from 'node:zlib'
import { Decoder, Encoder } from 'cbor-x'
import { describe, expect, it } from 'vitest'
import { signWithKeyObject } from '../src/key-chain-signer'
import { generateKeyPair } from '../src/keys'
import type { Signer, SigningAlgorithm } from '../src/signer'
import { decodeStatusListCwt, signStatusListCwt } from '../src/status-list-cwt'
import { StatusListError, statusAt } from '../src/status-list-token'

async function testSigner(alg: SigningAlgorithm) {
  const pair = await generateKeyPair(alg)
  const key = createPrivateKey({ key: pair.privateJwk as never, format: 'jwk' })
  const signer: Signer = {
    alg,
    kid: pair.kid,
    publicJwk: pair.publicJwk,
    x5c: [],
    sign: async (data) => signWithKeyObject(key, alg, data),
  }
  return { signer, publicKey: createPublicKey({ key: pair.publicJwk as never, format: 'jwk' }) }
}

const at = new Date('2026-01-01T00:00:00Z')
const cwtOf = (signer: Signer) =>
  signStatusListCwt({
    signer,
    uri: 'https://issuer.example/status-lists/1',
    bits: 2,
    lst: deflateSync(Uint8Array.of(0xc9, 0x44, 0xf9)),
    issuedAt: at,
    expiresAt: new Date(at.getTime() + 86_400_000),
    ttlSeconds: 300,
  })

describe('Status List Token in CWT form (draft-ietf-oauth-status-list §5.2)', () => {
  it.each([
    ['ES256', -7],
    ['ES384', -35],
    ['EdDSA', -8],
  ] as const)(
    '§5.2, RFC 9053: signed with %s (COSE alg %i), it verifies with its key only',
    async (alg, id) => {
      const { signer, publicKey } = await testSigner(alg)
      const bytes = await cwtOf(signer)
      const headers = new Decoder({ mapsAsObjects: false }).decode(
        new Decoder({ mapsAsObjects: false }).decode(bytes.subarray(1))[0],
      ) as Map<number, unknown>
      expect(headers.get(1)).toBe(id)
      const cwt = await decodeStatusListCwt(bytes)
      expect(cwt).toMatchObject({
        typ: 'application/statuslist+cwt',
        sub: 'https://issuer.example/status-lists/1',
        iat: at.getTime() / 1000,
        exp: at.getTime() / 1000 + 86_400,
        ttl: 300,
      })
      expect(cwt.verify(publicKey)).toBe(true)
      expect(cwt.verify((await testSigner(alg)).publicKey)).toBe(false)
      // A key of another type than the protected alg names is not tried (RFC 9053 §2).
      expect(cwt.verify((await testSigner(alg === 'ES256' ? 'ES384' : 'ES256')).publicKey)).toBe(false)
      expect([0, 1, 2].map((idx) => statusAt(cwt.list(), idx))).toStrictEqual([1, 2, 0])
    },
  )

  it('RFC 9052 §4.2: an untagged COSE_Sign1 is read as well', async () => {
    const { signer, publicKey } = await testSigner('ES256')
    const untagged = (await cwtOf(signer)).subarray(1)
    expect((await decodeStatusListCwt(untagged)).verify(publicKey)).toBe(true)
  })

  it('S-123: bytes that are not a COSE_Sign1 with CWT claims are refused before any decoding', async () => {
    const encoder = new Encoder({ mapsAsObjects: false, useRecords: false, tagUint8Array: false })
    const refused = (bytes: Uint8Array) =>
      decodeStatusListCwt(bytes).then(
        () => 'decoded',
        (error: Error) => (error instanceof StatusListError ? error.message : `other: ${error.message}`),
      )
    expect(await refused(new TextEncoder().encode('eyJhbGciOi.x.y'))).toMatch(/^is refused as CBOR/)
    // A bignum (tag 2) is what the pre-scan stops.
    expect(await refused(Uint8Array.of(0xc2, 0x41, 0x01))).toMatch(/^is refused as CBOR: a bignum \(tag 2\)/)
    expect(await refused(encoder.encode(['a', 'b']))).toBe('is not a COSE_Sign1')
    const noClaims = encoder.encode([
      encoder.encode(new Map([[1, -7]])),
      new Map(),
      encoder.encode('x'),
      new Uint8Array(64),
    ])
    expect(await refused(noClaims)).toBe('has no CWT claims')
  })
})
