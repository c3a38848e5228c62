import { createPrivateKey, X509Certificate } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { deflateSync } from 'node:zlib'
import {
  createCertificate,
  generateKeyPair,
  MAX_STATUS_LIST_BYTES,
  type Signer,
  signJws,
  signWithKeyObject,
} from '@credential-service/crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireValidEntry, type StatusCheck, statusListEntryOf } from './status-list'

/** An issuer CA and its leaf, and a local server that serves the list tokens put in `lists`. */
async function listIssuer() {
  const ca = await generateKeyPair('ES256')
  const caPem = await createCertificate({
    subjectPublicJwk: ca.publicJwk,
    issuerPrivateJwk: ca.privateJwk,
    subject: 'CN=Status CA,C=DE',
    validityDays: 30,
    ca: true,
  })
  const leaf = await generateKeyPair('ES256')
  const leafPem = await createCertificate({
    subjectPublicJwk: leaf.publicJwk,
    issuerPrivateJwk: ca.privateJwk,
    issuerCertificate: caPem,
    subject: 'CN=Status Issuer,C=DE',
    validityDays: 30,
  })
  const key = createPrivateKey({ key: leaf.privateJwk as never, format: 'jwk' })
  const signer: Signer = {
    alg: 'ES256',
    kid: leaf.kid,
    publicJwk: leaf.publicJwk,
    x5c: [new X509Certificate(leafPem).raw.toString('base64')],
    sign: async (data) => signWithKeyObject(key, 'ES256', data),
  }
  const lists: Record<string, string> = {}
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/statuslist+jwt' }).end(lists[String(req.url)] ?? '')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    anchor: new X509Certificate(caPem),
    server,
    /** Serves a list of these bytes at `path`; its URI. */
    async serve(path: string, bytes: Uint8Array, bits = 1) {
      const uri = `${base}${path}`
      const now = Math.floor(Date.now() / 1000)
      const lst = deflateSync(bytes).toString('base64url')
      lists[path] = await signJws(
        signer,
        { typ: 'statuslist+jwt', x5c: signer.x5c },
        { sub: uri, iat: now, exp: now + 600, status_list: { bits, lst } },
      )
      return uri
    },
  }
}

const reasonOf = (promise: Promise<void>) =>
  promise.then(
    () => 'VALID',
    (error: Error) => error.message,
  )

describe('the status of an mdoc MSO entry (TSL §8.3, V-33)', () => {
  let issuer: Awaited<ReturnType<typeof listIssuer>>
  let check: StatusCheck
  beforeAll(async () => {
    issuer = await listIssuer()
    check = {
      anchors: [issuer.anchor],
      acceptAnyIssuer: false,
      outbound: { allowHttp: true, allowedHosts: ['127.0.0.1'], maxResponseBytes: 256 * 1024 },
      now: new Date(),
    }
  })
  afterAll(() => new Promise<void>((resolve) => issuer.server.close(() => resolve())))

  it('F-31: the entry is read LSB-first; VALID passes, INVALID and SUSPENDED fail', async () => {
    const uri = await issuer.serve('/two-bits', Uint8Array.of(0xc9, 0x44, 0xf9), 2)
    expect(await reasonOf(requireValidEntry({ uri, idx: 2 }, check))).toBe('VALID')
    expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, check))).toBe(
      'the credential is revoked (INVALID)',
    )
    expect(await reasonOf(requireValidEntry({ uri, idx: 1 }, check))).toBe('the credential is suspended')
  })

  it('S-124, TSL §11.1: a list that inflates beyond the cap (zlib bomb) leaves the status undetermined: rejected', async () => {
    const uri = await issuer.serve('/bomb', new Uint8Array(2 * MAX_STATUS_LIST_BYTES))
    expect(await reasonOf(requireValidEntry({ uri, idx: 0 }, check))).toBe(
      `the status list inflates beyond ${MAX_STATUS_LIST_BYTES} bytes`,
    )
  })

  it('F-33: an index past the end of the list is rejected', async () => {
    const uri = await issuer.serve('/short', new Uint8Array(2))
    expect(await reasonOf(requireValidEntry({ uri, idx: 15 }, check))).toBe('VALID')
    expect(await reasonOf(requireValidEntry({ uri, idx: 16 }, check))).toBe(
      'the status list has no entry at index 16',
    )
  })
})

describe('the status claim of an SD-JWT VC (TSL §6.2, F-33)', () => {
  it('is read only as {idx: non-negative integer, uri: string}; without status_list there is none', () => {
    expect(statusListEntryOf({ status_list: { idx: 3, uri: 'https://x/1' } })).toStrictEqual({
      idx: 3,
      uri: 'https://x/1',
    })
    expect(statusListEntryOf(undefined)).toBeUndefined()
    expect(statusListEntryOf({ other_mechanism: {} })).toBeUndefined()
    for (const bad of [
      { idx: -1, uri: 'u' },
      { idx: 1.5, uri: 'u' },
      { idx: '1', uri: 'u' },
      { idx: 1 },
      null,
    ])
      expect(() => statusListEntryOf({ status_list: bad })).toThrow(
        'the credential’s status_list is not {idx, uri}',
      )
  })
})
