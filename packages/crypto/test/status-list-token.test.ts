import { createPrivateKey } from 'node:crypto'
import { inflateSync } from 'node:zlib'
import { compactVerify, decodeProtectedHeader, importJWK } from 'jose'
import { describe, expect, it } from 'vitest'
import { signWithKeyObject } from '../src/key-chain-signer'
import { generateKeyPair } from '../src/keys'
import type { Signer } from '../src/signer'
import { signStatusListToken } from '../src/status-list-token'

async function testSigner(): Promise<Signer> {
  const pair = await generateKeyPair('ES256')
  const key = createPrivateKey({ key: pair.privateJwk as never, format: 'jwk' })
  return {
    alg: 'ES256',
    kid: pair.kid,
    publicJwk: pair.publicJwk,
    x5c: ['MIIB'],
    sign: async (data) => signWithKeyObject(key, 'ES256', data),
  }
}

/** Statuses given as a full array, passed to the signer as the entries that are not VALID. */
const entriesOf = (statuses: number[]) =>
  statuses.flatMap((status, idx) => (status === 0 ? [] : [{ idx, status }]))

describe('Status List Token (draft-ietf-oauth-status-list)', () => {
  it('F-31, TSL §4.1: bits=1 spec vector [1,0,0,1,1,1,0,1,1,1,0,0,0,1,0,1] packs LSB-first to B9 A3', async () => {
    const signer = await testSigner()
    const statuses = [1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1]
    const token = await signStatusListToken({
      signer,
      uri: 'https://issuer.example/status-lists/1',
      bits: 1,
      size: statuses.length,
      entries: entriesOf(statuses),
      issuedAt: new Date(1_700_000_000_000),
      expiresAt: new Date(1_700_086_400_000),
      ttlSeconds: 300,
    })
    const { payload } = await compactVerify(token, await importJWK(signer.publicJwk, 'ES256'))
    const claims = JSON.parse(new TextDecoder().decode(payload))
    expect(claims).toStrictEqual({
      sub: 'https://issuer.example/status-lists/1',
      iat: 1_700_000_000,
      exp: 1_700_086_400,
      ttl: 300,
      status_list: { bits: 1, lst: expect.any(String) },
    })
    // Inflated with node:zlib, not the library that deflated it.
    expect([...inflateSync(Buffer.from(claims.status_list.lst, 'base64url'))]).toStrictEqual([0xb9, 0xa3])
    expect(decodeProtectedHeader(token)).toStrictEqual({
      alg: 'ES256',
      typ: 'statuslist+jwt',
      kid: signer.kid,
      x5c: ['MIIB'],
    })
  })

  it('F-31, TSL §4.1: bits=2 spec vector of 12 entries packs to C9 44 F9', async () => {
    const statuses = [1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3]
    const token = await signStatusListToken({
      signer: await testSigner(),
      uri: 'https://issuer.example/status-lists/2',
      bits: 2,
      size: statuses.length,
      entries: entriesOf(statuses),
      issuedAt: new Date(),
      expiresAt: new Date(Date.now() + 60_000),
      ttlSeconds: 60,
    })
    const lst = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()).status_list.lst
    expect([...inflateSync(Buffer.from(lst, 'base64url'))]).toStrictEqual([0xc9, 0x44, 0xf9])
  })
})
