import { createPrivateKey } from 'node:crypto'
import { deflateSync, inflateSync } from 'node:zlib'
import { compactVerify, decodeProtectedHeader, importJWK } from 'jose'
import { describe, expect, it } from 'vitest'
import { signWithKeyObject } from '../src/key-chain-signer'
import { generateKeyPair } from '../src/keys'
import type { Signer } from '../src/signer'
import {
  MAX_STATUS_LIST_BYTES,
  StatusListError,
  signStatusListToken,
  statusInList,
} from '../src/status-list-token'

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

  it('F-31, TSL §4.1: statusInList reads both spec vectors back, LSB-first, from the signed token', async () => {
    const signer = await testSigner()
    for (const [bits, statuses] of [
      [1, [1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1]],
      [2, [1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3]],
    ] as const) {
      const token = await signStatusListToken({
        signer,
        uri: 'https://issuer.example/status-lists/3',
        bits,
        size: statuses.length,
        entries: entriesOf([...statuses]),
        issuedAt: new Date(),
        expiresAt: new Date(Date.now() + 60_000),
        ttlSeconds: 60,
      })
      expect(statuses.map((_, idx) => statusInList(token, idx))).toStrictEqual(statuses)
    }
  })
})

/** An unsigned token around `status_list` (statusInList reads a token whose signature was checked). */
const tokenWith = (statusList: unknown) =>
  `e30.${Buffer.from(JSON.stringify({ status_list: statusList })).toString('base64url')}.sig`
const lstOf = (bytes: Uint8Array) => deflateSync(bytes).toString('base64url')
const refusal = (token: string, idx: number) => {
  try {
    return `answered ${statusInList(token, idx)}`
  } catch (error) {
    return error instanceof StatusListError ? error.message : `threw ${String(error)}`
  }
}

describe('Status List Token reading with a size cap (TSL §8.3, §11.1)', () => {
  it('S-124, F-33: an lst that inflates beyond MAX_STATUS_LIST_BYTES (a zlib bomb) is refused, not unpacked', () => {
    // 32 MiB of zero bytes deflate to about 32 KiB: 2^28 one-bit entries once inflated.
    const bomb = lstOf(new Uint8Array(2 * MAX_STATUS_LIST_BYTES))
    expect(bomb.length).toBeLessThan(64 * 1024)
    expect(refusal(tokenWith({ bits: 1, lst: bomb }), 0)).toBe(
      `inflates beyond ${MAX_STATUS_LIST_BYTES} bytes`,
    )
    // At the cap itself the list is read.
    const full = lstOf(new Uint8Array(MAX_STATUS_LIST_BYTES).fill(0x40))
    expect(refusal(tokenWith({ bits: 2, lst: full }), 4 * MAX_STATUS_LIST_BYTES - 1)).toBe('answered 1')
  })

  it('F-33: an index past the end of the list, negative or not an integer is refused', () => {
    const token = tokenWith({ bits: 2, lst: lstOf(Uint8Array.of(0xc9, 0x44, 0xf9)) })
    expect(refusal(token, 11)).toBe('answered 3')
    expect(refusal(token, 12)).toBe('has no entry at index 12')
    expect(refusal(token, -1)).toBe('has no entry at index -1')
    expect(refusal(token, 1.5)).toBe('has no entry at index 1.5')
  })

  it('F-30: bits other than 1, 2, 4, 8, a missing or non-ZLIB lst, or no status_list are refused; bits 8 reads whole bytes', () => {
    const lst = lstOf(Uint8Array.of(0x01, 0x0c))
    expect(refusal(tokenWith({ bits: 3, lst }), 0)).toBe('has bits other than 1, 2, 4 or 8')
    expect(refusal(tokenWith({ bits: '1', lst }), 0)).toBe('has bits other than 1, 2, 4 or 8')
    expect(refusal(tokenWith({ bits: 1 }), 0)).toBe('has no lst')
    expect(refusal(tokenWith({ bits: 1, lst: 'bm90LXpsaWI' }), 0)).toBe(
      'has an lst that is not ZLIB-compressed',
    )
    expect(refusal(tokenWith(undefined), 0)).toBe('has no status_list claim')
    expect(refusal('not-a-jwt', 0)).toBe('is not a JWT')
    expect(refusal(tokenWith({ bits: 8, lst }), 1)).toBe('answered 12')
  })
})
