import { verify, X509Certificate } from 'node:crypto'
import { inflateSync } from 'node:zlib'
import { Decoder, Encoder } from 'cbor-x'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readyToRequest, requestCredential, startIssuerWorld, type World } from './world'

// routes/status-lists.ts: the Status List Token (draft-ietf-oauth-status-list §8.1, F-32), the
// issuer served alone over the `issuance` world, whose `pid-status` configuration has status
// management. Revocation itself is checked by apps/all-in-one/test/status-list.test.ts.
describe('issuer GET /issuers/{tenant}/status-lists/{id}', () => {
  let world: World
  /** The status list entry of a credential tenant A issued. */
  let entry: { idx: number; uri: string }
  beforeAll(async () => {
    world = await startIssuerWorld()
    const { accessToken, body } = await readyToRequest(world, 'a', 'pid-status')
    const issued = await requestCredential(world, world.tenants.a.id, accessToken, body)
    const credential = issued.json().credentials[0].credential as string
    entry = (decodeJwt(credential.split('~')[0] as string) as { status: { status_list: typeof entry } })
      .status.status_list
  })
  afterAll(() => world.close())

  const path = () => new URL(entry.uri).pathname

  describe('happy', () => {
    it('§8.1: the issued credential names a list of its issuer, served as a signed statuslist+jwt', async () => {
      expect(entry.uri.startsWith(`${world.tenants.a.issuer}/status-lists/`)).toBe(true)
      const response = await world.app.inject({ url: path() })
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toBe('application/statuslist+jwt')
      expect(response.headers['access-control-allow-origin']).toBe('*')
      expect(response.headers['cache-control']).toMatch(/^public, max-age=\d+$/)
      expect(decodeProtectedHeader(response.body)).toMatchObject({ typ: 'statuslist+jwt' })
      expect(decodeJwt(response.body)).toMatchObject({
        sub: entry.uri,
        status_list: { bits: expect.any(Number), lst: expect.any(String) },
      })
    })

    it('§8.1: If-None-Match with the ETag is 304', async () => {
      const first = await world.app.inject({ url: path() })
      const again = await world.app.inject({
        url: path(),
        headers: { 'if-none-match': first.headers.etag as string },
      })
      expect(again.statusCode).toBe(304)
    })
  })

  describe('CWT form (TSL §5.2)', () => {
    const CWT = 'application/statuslist+cwt'
    // An independent reading: cbor-x as it is, node:crypto for the signature. The COSE_Sign1 tag
    // (18) is taken off by hand, as @owf/mdoc registers its own decoder for it process-wide.
    const decoder = new Decoder({ mapsAsObjects: false, useRecords: false })
    const encoder = new Encoder({ mapsAsObjects: false, useRecords: false, tagUint8Array: false })
    const HASHES: Record<number, string | null> = { [-7]: 'sha256', [-35]: 'sha384', [-8]: null }

    it('§5.2, §8.1, F-32: Accept application/statuslist+cwt serves the same list as a COSE_Sign1 CWT, signed by the key chain', async () => {
      const response = await world.app.inject({ url: path(), headers: { accept: CWT } })
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toBe(CWT)
      expect(response.headers.vary).toBe('Accept')
      expect(response.headers['access-control-allow-origin']).toBe('*')
      expect(response.headers['cache-control']).toMatch(/^public, max-age=\d+$/)
      const bytes = response.rawPayload
      expect(bytes[0]).toBe(0xd2) // tag 18: COSE_Sign1 (RFC 9052 §4.2)
      const [protectedBytes, unprotected, payload, signature] = decoder.decode(bytes.subarray(1)) as [
        Uint8Array,
        Map<number, unknown>,
        Uint8Array,
        Uint8Array,
      ]
      expect(unprotected).toBeInstanceOf(Map)
      const headers = decoder.decode(protectedBytes) as Map<number, unknown>
      expect(headers.get(16)).toBe(CWT)
      const x5chain = headers.get(33)
      const leaf = new X509Certificate(Array.isArray(x5chain) ? x5chain[0] : (x5chain as Uint8Array))
      const alg = headers.get(1) as number
      expect(Object.keys(HASHES)).toContain(String(alg))
      const toBeSigned = encoder.encode(['Signature1', protectedBytes, new Uint8Array(0), payload])
      const valid = (sig: Uint8Array) =>
        verify(HASHES[alg] ?? null, toBeSigned, { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' }, sig)
      expect(valid(signature)).toBe(true)
      const broken = Uint8Array.from(signature)
      broken[0] = (broken[0] as number) ^ 1
      expect(valid(broken)).toBe(false)

      const claims = decoder.decode(payload) as Map<number, unknown>
      const jwt = decodeJwt((await world.app.inject({ url: path() })).body) as {
        iat: number
        exp: number
        ttl: number
        status_list: { bits: number; lst: string }
      }
      expect(claims.get(2)).toBe(entry.uri) // sub
      expect(claims.get(6)).toBe(jwt.iat) // iat
      expect(claims.get(4)).toBe(jwt.exp) // exp
      expect(claims.get(65534)).toBe(jwt.ttl) // ttl
      const list = claims.get(65533) as Map<string, unknown>
      expect(list.get('bits')).toBe(jwt.status_list.bits)
      const lst = list.get('lst') as Uint8Array
      expect(inflateSync(lst)).toStrictEqual(inflateSync(Buffer.from(jwt.status_list.lst, 'base64url')))
      // The leaf is the key chain's, the one of the JWT form.
      const jwtLeaf = (decodeProtectedHeader((await world.app.inject({ url: path() })).body).x5c ?? [])[0]
      expect(leaf.raw.toString('base64')).toBe(jwtLeaf)
    })

    it('§8.1: the JWT form stays the answer to no Accept, */* and application/statuslist+jwt', async () => {
      for (const accept of [undefined, '*/*', 'application/statuslist+jwt', `${CWT};q=0.5, application/*`]) {
        const response = await world.app.inject({ url: path(), headers: accept ? { accept } : {} })
        expect(response.statusCode).toBe(200)
        expect(response.headers['content-type']).toBe('application/statuslist+jwt')
        expect(response.headers.vary).toBe('Accept')
        expect(decodeProtectedHeader(response.body)).toMatchObject({ typ: 'statuslist+jwt' })
      }
    })

    it('§8.2: each form has its own ETag; If-None-Match is 304 for the form it was given for', async () => {
      const jwt = await world.app.inject({ url: path() })
      const cwt = await world.app.inject({ url: path(), headers: { accept: CWT } })
      expect(cwt.headers.etag).toBeTruthy()
      expect(cwt.headers.etag).not.toBe(jwt.headers.etag)
      const again = (accept: string, etag: string) =>
        world.app.inject({ url: path(), headers: { accept, 'if-none-match': etag } })
      expect((await again(CWT, cwt.headers.etag as string)).statusCode).toBe(304)
      expect((await again(CWT, jwt.headers.etag as string)).statusCode).toBe(200)
      expect((await again('application/statuslist+jwt', cwt.headers.etag as string)).statusCode).toBe(200)
    })

    it('RFC 9110 §15.5.7: an Accept that takes neither form is 406 Not Acceptable', async () => {
      for (const accept of ['text/html', 'application/json', `${CWT};q=0, application/statuslist+jwt;q=0`]) {
        const response = await world.app.inject({ url: path(), headers: { accept } })
        expect(response.statusCode).toBe(406)
        expect(response.json()).toMatchObject({ error: 'not_acceptable' })
      }
    })
  })

  describe('error', () => {
    it('an unknown list, or a list of an unknown tenant, is 404', async () => {
      const unknown = await world.app.inject({
        url: `/issuers/${world.tenants.a.id}/status-lists/no-such-list`,
      })
      expect(unknown.statusCode).toBe(404)
      expect(unknown.json()).toMatchObject({ error: 'not_found' })
      const listId = path().split('/').at(-1)
      expect(
        (await world.app.inject({ url: `/issuers/nobody-here/status-lists/${listId}` })).statusCode,
      ).toBe(404)
    })
  })

  describe('security', () => {
    it("tenant B does not serve tenant A's status list", async () => {
      const asB = path().replace(`/issuers/${world.tenants.a.id}/`, `/issuers/${world.tenants.b.id}/`)
      const response = await world.app.inject({ url: asB })
      expect(response.statusCode).toBe(404)
    })
  })
})
